//! The tools' answers. Each reads the figures from the code that computes them for
//! the dashboard and the CLI (the dashboard's view and data functions, the analysis
//! crate's categories, the stored payload analyses, the use cases of `citriage-app`)
//! and adds the evidence items the answer rests on.

use crate::args::{
    ActionArg, AnalyzePayload, DatasetArg, DraftAction, ExtractFailure, FindSuspects, GetPattern, JobHistory,
    ListFailingJobs, ListPatterns, ListRecords, LookupEvidence, PrStateArgs, SearchFailures, SortArg, TestHistory,
    VerifyReport, WithinArg,
};
use crate::page;
use crate::state::{Inner, ToolError};
use citriage_actions::pattern::{failure_evidence, BugRouting, PatternFacts, SampleFailure};
use citriage_actions::payload::{payload_evidence, PayloadOptions};
use citriage_actions::Draft;
use citriage_analysis::build_findings::{build_evidence, build_url};
use citriage_analysis::misclass::{entry_evidence, entry_excerpt};
use citriage_analysis::{categorize_snapshot, severity, RuleSet};
use citriage_model::build::BuildRecord;
use citriage_model::evidence::sha256_hex;
use citriage_model::{Dataset, Day, Evidence, EvidenceKind};
use citriage_payload::PayloadAnalysis;
use citriage_store::{ClusterFailure, Store};
use citriage_web::index::WebIndex;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// An answer: its figures and the evidence they rest on.
pub struct Answer {
    pub result: Value,
    pub evidence: Vec<Evidence>,
}

impl Answer {
    pub(crate) fn new(result: Value, mut evidence: Vec<Evidence>) -> Answer {
        evidence.sort_by(|a, b| a.id.cmp(&b.id));
        evidence.dedup_by(|a, b| a.id == b.id);
        Answer { result, evidence }
    }

    /// `{"result": …, "evidence": [{id, kind, locator, excerpt, as_of}…]}`.
    pub fn into_json(self) -> Value {
        let ev: Vec<Value> = self
            .evidence
            .iter()
            .map(|e| json!({"id": e.id, "kind": e.kind, "locator": e.locator, "excerpt": e.excerpt, "as_of": e.as_of}))
            .collect();
        json!({"result": self.result, "evidence": ev})
    }
}

fn bounded(v: Option<usize>, default: usize, max: usize, what: &str) -> Result<usize, ToolError> {
    match v {
        None => Ok(default),
        Some(n) if (1..=max).contains(&n) => Ok(n),
        Some(n) => Err(ToolError::input(format!("{what} must be 1 to {max}, not {n}"))),
    }
}

/// A SIG as the store names owners (`node`), from `node` or `sig-node`.
fn sig_name(owner: &str) -> &str {
    let o = owner.trim();
    o.strip_prefix("sig-").unwrap_or(o)
}

fn raw_job(name: &str) -> &str {
    name.strip_prefix("pr:").unwrap_or(name)
}

fn ds(d: Option<DatasetArg>) -> Dataset {
    match d {
        Some(DatasetArg::Flakes) => Dataset::Flakes,
        _ => Dataset::Failures,
    }
}

/// Job (dashboard name) → owners of the clusters holding its failures, from the
/// default profile's latest run (or the first stored).
fn owners_by_job(view: &WebIndex) -> BTreeMap<&str, BTreeSet<&str>> {
    let mut out: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let p = view.default_profile().map(|(_, p)| p);
    for p in p.into_iter() {
        for c in &p.clusters {
            if c.stored.owner.is_empty() {
                continue;
            }
            for r in &c.rows {
                out.entry(p.jobs[r.job as usize].as_str()).or_default().insert(c.stored.owner.as_str());
            }
        }
    }
    out
}

/// The filters of `list_failing_jobs` that do not depend on the answer's source.
struct JobFilter<'a> {
    owners: BTreeMap<&'a str, BTreeSet<&'a str>>,
    owner: Option<&'a str>,
    since: Option<i64>,
}

impl<'a> JobFilter<'a> {
    fn new(view: &'a WebIndex, a: &'a ListFailingJobs) -> Result<JobFilter<'a>, ToolError> {
        if let Some(w) = a.window_days {
            if !(1..=365).contains(&w) {
                return Err(ToolError::input(format!("window_days must be 1 to 365, not {w}")));
            }
        }
        let since = match (a.window_days, view.as_of) {
            (Some(w), Some(end)) => Some(end - i64::from(w) * citriage_model::time::DAY),
            (Some(_), None) => Some(i64::MAX),
            _ => None,
        };
        Ok(JobFilter { owners: owners_by_job(view), owner: a.owner.as_deref().map(sig_name), since })
    }

    /// Whether a job (dashboard name) passes the owner and window filters.
    fn keeps(&self, view: &WebIndex, name: &str) -> bool {
        if let Some(o) = self.owner {
            let own = self.owners.get(name);
            if !own.is_some_and(|s| s.iter().any(|x| sig_name(x).eq_ignore_ascii_case(o))) {
                return false;
            }
        }
        let Some(since) = self.since else { return true };
        view.job(raw_job(name)).is_some_and(|ji| {
            view.builds[ji.builds.clone()].iter().any(|b| {
                matches!(b.result.as_deref(), Some("FAILURE") | Some("ERROR")) && b.started.is_some_and(|s| s > since)
            })
        })
    }

    fn owners_of(&self, name: &str) -> Vec<&'a str> {
        self.owners.get(name).map(|s| s.iter().copied().collect()).unwrap_or_default()
    }
}

/// A snapshot entry's figures as a compact answer gives them (a flakes entry's
/// per-test counts as their number).
fn compact_stats(stats: &citriage_model::snapshot::JobStats) -> Value {
    match stats {
        citriage_model::snapshot::JobStats::Flakes(f) => json!({
            "consistency": f.consistency, "flakes": f.flakes,
            "test_flakes": f.test_flakes.as_ref().map(|t| t.len()),
        }),
        other => json!(other),
    }
}

/// `list_failing_jobs`: the newest snapshot, categorized with the built-in rules as
/// the dashboard's overview does, with each job's build figures from the view; on a
/// store without a snapshot of the dataset, the jobs the stored builds show failing
/// (or flaky), as the dashboard's job list does. `source` says which.
pub(crate) fn list_failing_jobs(inner: &Inner, a: &ListFailingJobs) -> Result<Answer, ToolError> {
    let dataset = ds(a.dataset);
    let p = page::page(a.cursor.as_deref(), a.limit, 25, 1000)?;
    let view = inner.view();
    let filter = JobFilter::new(&view, a)?;
    let snap = inner.with_store(|s| match s.latest(dataset)? {
        Some(latest) => Ok(Some(s.load_snapshot(latest.id)?)),
        None => Ok(None),
    })?;
    match snap {
        Some(snap) => failing_from_snapshot(&view, a, p, &filter, &snap),
        None => failing_from_builds(inner, &view, a, p, &filter),
    }
}

fn failing_from_snapshot(
    view: &WebIndex,
    a: &ListFailingJobs,
    p: page::Page,
    filter: &JobFilter,
    snap: &citriage_model::Snapshot,
) -> Result<Answer, ToolError> {
    let dataset = snap.meta.dataset;
    let cats = categorize_snapshot(snap, &RuleSet::builtin());
    let field = match dataset {
        Dataset::Failures => "failing_days",
        Dataset::Flakes => "consistency",
    };
    let mut picked = Vec::new();
    for c in &cats.categories {
        if a.category.as_deref().is_some_and(|want| !want.eq_ignore_ascii_case(&c.name)) {
            continue;
        }
        for j in &c.jobs {
            if filter.keeps(view, &j.entry.job) {
                picked.push((c, j));
            }
        }
    }
    let keys: Vec<String> = picked.iter().map(|(c, j)| format!("{}\t{}", c.name, j.entry.job)).collect();
    let (range, info) = page::finish("list_failing_jobs", a.cursor.as_deref(), p, &keys)?;
    let mut rows = Vec::new();
    let mut evidence = Vec::new();
    for (c, j) in &picked[range] {
        let name = j.entry.job.as_str();
        let ji = view.job(raw_job(name));
        let ev = entry_evidence(snap, name, &[field], entry_excerpt(&j.entry.stats));
        let mut row = json!({
            "job": name,
            "category": c.name,
            "severity": j.severity.as_str(),
            "stats": if a.detail { json!(j.entry.stats) } else { compact_stats(&j.entry.stats) },
            "owners": filter.owners_of(name),
            "pass_rate": ji.and_then(|ji| ji.summary.pass_rate),
            "evidence": [ev.id.clone()],
        });
        if a.detail {
            row["builds"] = json!(ji.map(|ji| &ji.summary));
        }
        rows.push(row);
        evidence.push(ev);
    }
    let by_category: Vec<Value> = cats.categories.iter().map(|c| json!({"name": c.name, "count": c.count()})).collect();
    let mut by_severity: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &snap.jobs {
        *by_severity.entry(severity::of(&e.stats).as_str()).or_insert(0) += 1;
    }
    let mut v = json!({
        "dataset": dataset,
        "source": format!("{dataset} snapshot of {}", snap.meta.date),
        "source_kind": "snapshot",
        "date": snap.meta.date,
        "snapshot_source": snap.meta.source,
        "jobs_in_snapshot": snap.jobs.len(),
        "by_category": by_category,
        "by_severity": by_severity,
        "matching": picked.len(),
        "jobs": rows,
    });
    page::put(&mut v, info);
    Ok(Answer::new(v, evidence))
}

/// The jobs whose tests fired a flake signal in the view's window, with how many tests did.
fn flaky_jobs(view: &WebIndex) -> BTreeMap<&str, usize> {
    let mut out: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, runs) in view.tests.iter() {
        for t in runs.iter().filter(|t| view.test_figures(t).is_some_and(|f| !f.signals.is_empty())) {
            if let Some(j) = view.jobs.get(t.job as usize) {
                *out.entry(j.name.as_str()).or_default() += 1;
            }
        }
    }
    out
}

fn failing_from_builds(
    inner: &Inner,
    view: &WebIndex,
    a: &ListFailingJobs,
    p: page::Page,
    filter: &JobFilter,
) -> Result<Answer, ToolError> {
    let dataset = ds(a.dataset);
    let mut q = BTreeMap::new();
    q.insert("sort".to_string(), "failing".to_string());
    q.insert("group".to_string(), "category".to_string());
    let list = citriage_web::data::jobs_list(view, &q)?;
    let flaky = flaky_jobs(view);
    let mut by_category = Vec::new();
    let mut picked = Vec::new();
    for g in &list.groups {
        let mut count = 0;
        for j in &g.jobs {
            let hit = match dataset {
                Dataset::Failures => citriage_web::data::failing_now_in(view, &j.job),
                Dataset::Flakes => flaky.contains_key(j.job.as_str()),
            };
            if !hit {
                continue;
            }
            count += 1;
            let wanted = a.category.as_deref().is_none_or(|want| want.eq_ignore_ascii_case(&g.name));
            if wanted && filter.keeps(view, &j.job) {
                picked.push((g.name.as_str(), j));
            }
        }
        if count > 0 {
            by_category.push(json!({"name": g.name, "count": count}));
        }
    }
    let keys: Vec<String> = picked.iter().map(|(c, j)| format!("{c}\t{}", j.job)).collect();
    let (range, info) = page::finish("list_failing_jobs", a.cursor.as_deref(), p, &keys)?;
    let page_jobs = &picked[range];
    // Each job cites its newest failed (or errored) build.
    let newest_failed: Vec<Option<String>> = page_jobs
        .iter()
        .map(|(_, j)| {
            view.job(&j.job).and_then(|ji| {
                view.builds[ji.builds.clone()]
                    .iter()
                    .rev()
                    .find(|b| matches!(b.result.as_deref(), Some("FAILURE") | Some("ERROR")))
                    .map(|b| b.build_id.clone())
            })
        })
        .collect();
    let cited = inner.with_store(|s| {
        let mut out = Vec::new();
        for ((_, j), id) in page_jobs.iter().zip(&newest_failed) {
            let ids: BTreeSet<&str> = id.iter().map(String::as_str).collect();
            out.push(builds_evidence(s, &j.job, &ids)?.into_values().next());
        }
        Ok(out)
    })?;
    let mut rows = Vec::new();
    let mut evidence = Vec::new();
    for ((cat, j), ev) in page_jobs.iter().zip(cited) {
        let mut row = json!({
            "job": j.job,
            "category": cat,
            "severity": Value::Null,
            "stats": {"builds": j.builds, "failed": j.failed, "errored": j.errored, "last_outcome": j.last_outcome,
                      "flaky_tests": flaky.get(j.job.as_str())},
            "owners": filter.owners_of(&j.job),
            "pass_rate": j.pass_rate,
            "evidence": ev.iter().map(|e| e.id.clone()).collect::<Vec<_>>(),
        });
        if a.detail {
            row["builds"] = json!(j);
        }
        rows.push(row);
        evidence.extend(ev);
    }
    let day = |t: Option<i64>| t.map(|s| Day::from_unix_seconds(s).to_string()).unwrap_or_else(|| "?".into());
    let first = view.builds.iter().filter_map(|b| b.started).min();
    let window = format!("{} to {}", day(first), day(view.as_of));
    let what = match dataset {
        Dataset::Failures => "newest finished build failed or errored",
        Dataset::Flakes => "a test fired a flake signal",
    };
    let mut v = json!({
        "dataset": dataset,
        "source": format!("builds from {window} (no {dataset} snapshot is stored: jobs whose {what})"),
        "source_kind": "builds",
        "date": Value::Null,
        "builds_window": window,
        "jobs_with_builds": view.jobs.len(),
        "by_category": by_category,
        "by_severity": Value::Null,
        "matching": picked.len(),
        "jobs": rows,
    });
    page::put(&mut v, info);
    Ok(Answer::new(v, evidence))
}

/// Build-result evidence for builds of a job, by build id.
fn builds_evidence(store: &Store, job: &str, ids: &BTreeSet<&str>) -> Result<BTreeMap<String, Evidence>, ToolError> {
    let mut out = BTreeMap::new();
    if ids.is_empty() {
        return Ok(out);
    }
    for b in store.builds(Some(job))? {
        if ids.contains(b.build_id.as_str()) {
            out.insert(b.build_id.clone(), build_evidence(&b));
        }
    }
    Ok(out)
}

/// `job_history`: the dashboard's job page data. Compact by default (the summary,
/// corrected figures, a page of builds, the top failing and flaky tests); `detail`
/// adds the daily pass rates, every listed test and the build links.
pub(crate) fn job_history(inner: &Inner, a: &JobHistory) -> Result<Answer, ToolError> {
    let pg = page::page(a.cursor.as_deref(), a.builds, 20, 200)?;
    let view = inner.view();
    let job = raw_job(a.job.trim());
    let mut d = citriage_web::data::job(&view, job)?;
    let keys: Vec<String> = d.builds.iter().map(|b| b.build_id.clone()).collect();
    let (range, info) = page::finish("job_history", a.cursor.as_deref(), pg, &keys)?;
    d.builds = d.builds.drain(range).collect();
    let ids: BTreeSet<&str> = d.builds.iter().map(|b| b.build_id.as_str()).collect();
    let ev = inner.with_store(|s| builds_evidence(s, job, &ids))?;
    let mut v = serde_json::to_value(&d).map_err(|e| ToolError::other(e.to_string()))?;
    if let Some(builds) = v["builds"].as_array_mut() {
        for b in builds {
            let id = b["build_id"].as_str().and_then(|i| ev.get(i)).map(|e| e.id.clone());
            b["evidence"] = json!(id.into_iter().collect::<Vec<_>>());
            if !a.detail {
                if let Some(o) = b.as_object_mut() {
                    for k in ["url", "cell", "outcome"] {
                        o.remove(k);
                    }
                }
            }
        }
    }
    if !a.detail {
        const TOP: usize = 10;
        let n_daily = d.daily.len();
        v["daily"] = json!(d.daily.iter().skip(n_daily.saturating_sub(7)).collect::<Vec<_>>());
        v["failing_tests"] = json!(d.failing_tests.iter().take(TOP).collect::<Vec<_>>());
        v["flaky_tests"] = json!(d
            .flaky_tests
            .iter()
            .take(TOP)
            .map(|t| json!({"name": t.name, "runs": t.runs, "failed_runs": t.failed_runs, "flip_rate": t.flip_rate,
                            "signals": t.signals}))
            .collect::<Vec<_>>());
        // The mass failures behind the corrected figures: counted here, listed with detail.
        for list in ["mass_failures", "mass_failure_builds"] {
            if let Some(n) = v["figures"][list].as_array().map(Vec::len) {
                v["figures"][list] = json!(n);
            }
        }
        v["left_out"] = json!({
            "daily": n_daily.saturating_sub(7),
            "failing_tests": d.failing_tests.len().saturating_sub(TOP),
            "flaky_tests": d.flaky_tests.len().saturating_sub(TOP),
            "hint": "detail: true gives every day and test, and the mass failures behind the figures",
        });
    }
    page::put(&mut v, info);
    Ok(Answer::new(v, ev.into_values().collect()))
}

/// `test_history`: the dashboard's test page data; failed runs cite their builds.
/// Compact by default (each job's figures and its newest failed runs); `detail` adds
/// every listed run.
pub(crate) fn test_history(inner: &Inner, a: &TestHistory) -> Result<Answer, ToolError> {
    let n = bounded(a.runs, 20, 200, "runs")?;
    let pg = page::page(a.cursor.as_deref(), a.jobs, 20, 200)?;
    let view = inner.view();
    let mut h = citriage_web::data::test_history(&view, a.name.trim())?;
    let keys: Vec<String> = h.jobs.iter().map(|j| j.job.clone()).collect();
    let (range, info) = page::finish("test_history", a.cursor.as_deref(), pg, &keys)?;
    h.jobs = h.jobs.drain(range).collect();
    for j in &mut h.jobs {
        if a.detail {
            j.history.truncate(n);
        } else {
            // The newest failed runs only: what an agent looks at next.
            j.history.retain(|r| r.status != "passed");
            j.history.truncate(3);
        }
    }
    let mut evidence = Vec::new();
    let mut per_job: BTreeMap<String, BTreeMap<String, Evidence>> = BTreeMap::new();
    inner.with_store(|s| {
        for j in &h.jobs {
            let ids: BTreeSet<&str> =
                j.history.iter().filter(|r| r.status != "passed").map(|r| r.build_id.as_str()).collect();
            per_job.insert(j.job.clone(), builds_evidence(s, &j.job, &ids)?);
        }
        Ok(())
    })?;
    let mut v = serde_json::to_value(&h).map_err(|e| ToolError::other(e.to_string()))?;
    if let Some(jobs) = v["jobs"].as_array_mut() {
        for j in jobs {
            let job = j["job"].as_str().unwrap_or("").to_string();
            if let Some(hist) = j["history"].as_array_mut() {
                for r in hist {
                    let id = r["build_id"].as_str().and_then(|i| per_job.get(&job).and_then(|m| m.get(i)));
                    r["evidence"] = json!(id.map(|e| vec![e.id.clone()]).unwrap_or_default());
                }
            }
        }
    }
    for m in per_job.into_values() {
        evidence.extend(m.into_values());
    }
    page::put(&mut v, info);
    Ok(Answer::new(v, evidence))
}

fn put(p: &mut BTreeMap<String, String>, k: &str, v: Option<String>) {
    if let Some(v) = v {
        p.insert(k.to_string(), v);
    }
}

/// The line of an excerpt holding a byte offset.
fn line_at(text: &str, at: usize) -> &str {
    let at = at.min(text.len());
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    &text[start..end]
}

/// `search_failures`: the dashboard's search; each match cites its matched line.
/// Compact by default (where, and the matched line); `detail` adds the excerpts with
/// their context.
pub(crate) fn search_failures(inner: &Inner, a: &SearchFailures) -> Result<Answer, ToolError> {
    let pg = page::page(a.cursor.as_deref(), a.max, 15, 1000)?;
    let reach = pg.offset.saturating_add(pg.size);
    if reach > citriage_web::search::MAX_MATCHES {
        return Err(ToolError::input(format!(
            "cursor: at most {} matches are listed; narrow the search (job, max_age_days, within)",
            citriage_web::search::MAX_MATCHES
        )));
    }
    let mut p = BTreeMap::new();
    p.insert("q".to_string(), a.q.clone());
    put(&mut p, "job", a.job.clone());
    put(&mut p, "exclude_job", a.exclude_job.clone());
    put(&mut p, "max_age_days", a.max_age_days.map(|d| d.to_string()));
    p.insert("max".to_string(), reach.to_string());
    put(&mut p, "context", a.context.map(|c| c.to_string()));
    put(
        &mut p,
        "within",
        a.within.map(|w| {
            match w {
                WithinArg::All => "all",
                WithinArg::Tests => "tests",
                WithinArg::Logs => "logs",
            }
            .to_string()
        }),
    );
    p.insert("group".to_string(), "job".to_string());
    let q = citriage_web::search::SearchQuery::parse(&p)?
        .ok_or_else(|| ToolError::input("q (a regular expression) is required"))?;
    let view = inner.view();
    let mut r = citriage_web::data::search(&view, &q);
    let keys: Vec<String> = r
        .matches
        .iter()
        .map(|m| format!("{}\t{}\t{}\t{}\t{:?}\t{}", m.job, m.build_id, m.kind, m.name, m.line, m.match_start))
        .collect();
    let total = r.found.max(keys.len()).min(citriage_web::search::MAX_MATCHES);
    let (range, info) = page::finish_of("search_failures", a.cursor.as_deref(), pg, &keys, total)?;
    r.matches = r.matches.drain(range).collect();
    let mut evidence = Vec::new();
    let mut v = serde_json::to_value(&r).map_err(|e| ToolError::other(e.to_string()))?;
    if let Some(ms) = v["matches"].as_array_mut() {
        for (m, sm) in ms.iter_mut().zip(&r.matches) {
            let line = line_at(&sm.excerpt, sm.match_start).chars().take(300).collect::<String>();
            let day = sm.started.map(|s| Day::from_unix_seconds(s).to_string()).unwrap_or_default();
            let e = if sm.kind == "log" {
                Evidence::new(
                    EvidenceKind::BuildLogExcerpt,
                    format!("{}/{}:{}", sm.url, sm.name, sm.line.unwrap_or(0)),
                    line,
                    String::new(),
                    day,
                )
            } else {
                Evidence::new(EvidenceKind::JunitCase, format!("{} :: {}", sm.url, sm.name), line, String::new(), day)
            };
            if !a.detail {
                *m = json!({
                    "job": sm.job, "build_id": sm.build_id, "started": sm.started, "kind": sm.kind,
                    "name": page::one_line(&sm.name, 160), "line": sm.line,
                    "matched_line": page::one_line(line_at(&sm.excerpt, sm.match_start), 160),
                });
            }
            m["evidence"] = json!([e.id.clone()]);
            evidence.push(e);
        }
    }
    if !a.detail {
        if let Some(gs) = v["groups"].as_array_mut() {
            let n = gs.len();
            gs.truncate(20);
            if n > 20 {
                v["groups_left_out"] = json!(n - 20);
            }
        }
    }
    page::put(&mut v, info);
    Ok(Answer::new(v, evidence))
}

fn failure_of(f: &ClusterFailure) -> SampleFailure {
    SampleFailure {
        job: if f.kind == "presubmit" || f.kind == "batch" { format!("pr:{}", f.job) } else { f.job.clone() },
        build_id: f.build_id.clone(),
        url: citriage_model::build::prow_url(&f.bucket, &f.path),
        test: f.test.clone(),
        started: f.started,
        text: f.failure_text.clone().unwrap_or_default(),
    }
}

fn profile_of(view: &WebIndex, wanted: Option<&str>) -> Result<String, ToolError> {
    match wanted.map(str::trim).filter(|p| !p.is_empty()) {
        Some(p) if view.profiles.contains_key(p) => Ok(p.to_string()),
        Some(p) => Err(ToolError::input(format!(
            "no clustering run of profile {p:?} is stored (stored: {})",
            view.profiles.keys().cloned().collect::<Vec<_>>().join(", ")
        ))),
        None => view
            .default_profile()
            .map(|(k, _)| k.clone())
            .ok_or_else(|| ToolError::input("no clustering run is stored (run `citriage cluster`)")),
    }
}

/// `list_patterns`: the dashboard's cluster list with each pattern's drift and
/// sub-patterns; each pattern cites its newest failure. Compact by default (figures,
/// ids, the text's first line); `detail` adds the per-day counts, top jobs and tests
/// and the sub-patterns.
pub(crate) fn list_patterns(inner: &Inner, a: &ListPatterns) -> Result<Answer, ToolError> {
    let view = inner.view();
    let pg = page::page(a.cursor.as_deref(), a.limit, 12, 100)?;
    if view.profiles.is_empty() {
        return Ok(Answer::new(
            json!({"profile": null, "clusters": [], "matching": 0, "next_cursor": null, "remaining": 0, "more": null,
                   "source": "no clustering run is stored: run `citriage cluster` over the stored builds"}),
            Vec::new(),
        ));
    }
    let profile = profile_of(&view, a.profile.as_deref())?;
    let end = pg.offset.saturating_add(pg.size);
    if pg.offset >= citriage_web::data::MAX_CLUSTERS {
        return Err(ToolError::input(format!(
            "cursor: at most {} patterns are listed; narrow the filters",
            citriage_web::data::MAX_CLUSTERS
        )));
    }
    let mut p = BTreeMap::new();
    p.insert("profile".to_string(), profile.clone());
    put(&mut p, "include", a.include.clone());
    put(&mut p, "exclude", a.exclude.clone());
    put(&mut p, "job", a.job.clone());
    put(&mut p, "test", a.test.clone());
    put(&mut p, "owner", a.owner.as_deref().map(|o| sig_name(o).to_string()));
    put(&mut p, "signature", a.signature.clone());
    put(
        &mut p,
        "sort",
        a.sort.map(|s| {
            match s {
                SortArg::Total => "total",
                SortArg::Today => "today",
                SortArg::Growth => "growth",
                SortArg::LastSeen => "last_seen",
                SortArg::FirstSeen => "first_seen",
            }
            .to_string()
        }),
    );
    p.insert("limit".to_string(), end.min(citriage_web::data::MAX_CLUSTERS).to_string());
    let q = citriage_web::data::ClusterQuery::parse(&p)?;
    let mut list = citriage_web::data::clusters(&view, &q)?;
    let keys: Vec<String> = list.clusters.iter().map(|c| c.stable_id.clone()).collect();
    let total = list.matching.min(citriage_web::data::MAX_CLUSTERS);
    let (range, info) = page::finish_of("list_patterns", a.cursor.as_deref(), pg, &keys, total)?;
    list.clusters = list.clusters.drain(range.clone()).collect();
    let mut dq = BTreeMap::new();
    dq.insert("profile".to_string(), profile.clone());
    dq.insert("all".to_string(), "1".to_string());
    let drift = citriage_web::data::drift(&view, &dq)?;
    let by_id: BTreeMap<&str, &citriage_web::data::DriftRow> =
        drift.patterns.iter().map(|d| (d.stable_id.as_str(), d)).collect();
    let mut evidence = Vec::new();
    let mut extra: Vec<(Value, Value, Option<String>)> = Vec::new();
    inner.with_store(|s| {
        for c in &list.clusters {
            let subs = s.cluster_subpatterns(&profile, &c.stable_id)?;
            let newest = s.cluster_failures(&profile, &c.stable_id, 1)?;
            let ev = newest.first().map(|f| failure_of(f).evidence());
            let sub: Vec<Value> =
                subs.iter().map(|x| json!({"kind": x.kind, "label": x.label, "failures": x.failures})).collect();
            let d = by_id
                .get(c.stable_id.as_str())
                .map(|d| json!({"kind": d.kind, "before": d.before, "after": d.after}))
                .unwrap_or(Value::Null);
            extra.push((json!(sub), d, ev.as_ref().map(|e| e.id.clone())));
            evidence.extend(ev);
        }
        Ok(())
    })?;
    let mut v = serde_json::to_value(&list).map_err(|e| ToolError::other(e.to_string()))?;
    if let Some(cs) = v["clusters"].as_array_mut() {
        for ((c, row), (sub, d, ev)) in cs.iter_mut().zip(&list.clusters).zip(extra) {
            if a.detail {
                c["sub_patterns"] = sub;
            } else {
                *c = json!({
                    "stable_id": row.stable_id, "text": page::one_line(&row.text, 160), "owner": row.owner,
                    "signatures": row.signatures, "total": row.total, "today": row.today, "growth": row.growth,
                    "first_seen": row.first_seen, "last_seen": row.last_seen, "jobs": row.jobs, "tests": row.tests,
                    "sub_patterns": sub.as_array().map_or(0, Vec::len),
                });
            }
            c["drift"] = d;
            c["evidence"] = json!(ev.into_iter().collect::<Vec<_>>());
        }
    }
    if !a.detail {
        // The filter choices are the dashboard's; an agent names them itself.
        if let Some(o) = v.as_object_mut() {
            o.remove("owners");
            o.remove("signatures");
        }
    }
    v["offset"] = json!(range.start);
    v["drift_window"] = json!({"from": drift.from, "to": drift.to, "span_days": drift.span_days});
    v["source"] = json!(format!("clustering run of profile {profile}"));
    page::put(&mut v, info);
    Ok(Answer::new(v, evidence))
}

/// The dashboard's page of one pattern, with its latest failures in full.
fn pattern_detail(
    inner: &Inner,
    view: &WebIndex,
    profile: &str,
    id: &str,
) -> Result<(citriage_web::data::ClusterDetail, Vec<ClusterFailure>), ToolError> {
    // Unknown patterns are answered without touching the store.
    citriage_web::data::cluster_detail(view, profile, id, || Ok((Vec::new(), Vec::new())))?;
    let (latest, subs) = inner.with_store(|s| {
        Ok((s.cluster_failures(profile, id, citriage_web::data::LATEST_FAILURES)?, s.cluster_subpatterns(profile, id)?))
    })?;
    let d = citriage_web::data::cluster_detail(view, profile, id, || Ok((latest.clone(), subs)))?;
    Ok((d, latest))
}

/// `get_pattern`: one pattern as the dashboard's page shows it. Compact by default
/// (the figures, the top jobs and tests, the newest failures' first lines); `detail`
/// gives the whole page with the failures' texts.
pub(crate) fn get_pattern(inner: &Inner, a: &GetPattern) -> Result<Answer, ToolError> {
    const TOP: usize = 10;
    const LATEST: usize = 5;
    let view = inner.view();
    let profile = profile_of(&view, a.profile.as_deref())?;
    let (mut d, mut latest) = pattern_detail(inner, &view, &profile, a.id.trim())?;
    const SUBS: usize = 5;
    let counts = json!({"jobs": d.jobs.len(), "tests": d.tests.len(), "latest": d.latest.len(),
                        "sub_patterns": d.sub_patterns.len()});
    if !a.detail {
        d.jobs.truncate(TOP);
        d.tests.truncate(TOP);
        d.latest.truncate(LATEST);
        latest.truncate(LATEST);
        d.sub_patterns.truncate(SUBS);
    }
    let ev: Vec<Evidence> = latest.iter().map(|f| failure_of(f).evidence()).collect();
    let mut v = serde_json::to_value(&d).map_err(|e| ToolError::other(e.to_string()))?;
    if !a.detail {
        let c = &d.cluster;
        v["cluster"] = json!({
            "stable_id": c.stable_id, "text": page::one_line(&c.text, 300), "owner": c.owner,
            "signatures": c.signatures, "total": c.total, "today": c.today, "growth": c.growth,
            "first_seen": c.first_seen, "last_seen": c.last_seen, "jobs": c.jobs, "tests": c.tests,
            "per_day": c.per_day,
        });
        if let Some(subs) = v["sub_patterns"].as_array_mut() {
            for x in subs {
                *x = json!({
                    "kind": x["kind"], "label": x["label"].as_str().map(|l| page::one_line(l, 160)),
                    "failures": x["failures"], "first_seen": x["first_seen"], "last_seen": x["last_seen"],
                });
            }
        }
        v["listed_of"] = counts;
        v["more"] = json!(
            "detail: true gives the pattern's full text, up to 100 jobs and tests, 20 failures with their texts \
             and every sub-pattern with an example"
        );
    }
    if let Some(ls) = v["latest"].as_array_mut() {
        for (l, e) in ls.iter_mut().zip(&ev) {
            if !a.detail {
                let t = l["text"].as_str().map(|t| page::one_line(t, 200));
                l["text"] = json!(t);
            }
            l["evidence"] = json!([e.id.clone()]);
        }
    }
    Ok(Answer::new(v, ev))
}

/// The facts a pattern's bug is written from: the dashboard's figures of the cluster
/// and its newest failures in full.
pub fn pattern_facts(view: &WebIndex, store: &mut Store, profile: &str, id: &str) -> Result<PatternFacts, ToolError> {
    citriage_web::data::cluster_detail(view, profile, id, || Ok((Vec::new(), Vec::new())))?;
    let latest = store.cluster_failures(profile, id, citriage_web::data::LATEST_FAILURES)?;
    let subs = store.cluster_subpatterns(profile, id)?;
    let d = citriage_web::data::cluster_detail(view, profile, id, || Ok((latest.clone(), subs)))?;
    let c = &d.cluster;
    Ok(PatternFacts {
        profile: profile.to_string(),
        stable_id: c.stable_id.clone(),
        text: c.text.clone(),
        owner: c.owner.clone(),
        signatures: c.signatures.clone(),
        total: c.total,
        window: (d.first_day, d.last_day),
        first_seen: c.first_seen,
        last_seen: c.last_seen,
        jobs: d.jobs.iter().map(|j| (j.name.clone(), j.failures)).collect(),
        tests: d.tests.iter().map(|t| (t.name.clone(), t.failures)).collect(),
        samples: latest.iter().map(failure_of).collect(),
        drift: d.drift.as_ref().map(|x| format!("{:?}: {} → {} failures", x.kind, x.before, x.after).to_lowercase()),
        page: None,
    })
}

/// Lines of an excerpt a compact answer gives.
const EXCERPT_LINES: usize = 30;
const EXCERPT_BYTES: usize = 1200;
/// Log excerpts a compact `extract_failure` gives (the first page only).
const EXCERPTS: usize = 4;

/// The first `lines` lines of a text, at most `bytes` bytes (cut at a line's end, or
/// within the first line at a character's).
fn head_lines(text: &str, lines: usize, bytes: usize) -> String {
    let mut out = String::new();
    for l in text.lines().take(lines) {
        if out.len() + l.len() + 1 > bytes {
            if out.is_empty() {
                out = l
                    .chars()
                    .scan(0, |n, c| {
                        *n += c.len_utf8();
                        (*n <= bytes).then_some(c)
                    })
                    .collect();
            }
            break;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(l);
    }
    out
}

/// `extract_failure`: a stored build's log excerpts and its failed tests' failure
/// lines. Compact by default: each excerpt's first lines and each test's first five
/// failure lines (`cut` says where more is stored); `detail` gives them whole.
pub(crate) fn extract_failure(inner: &Inner, a: &ExtractFailure) -> Result<Answer, ToolError> {
    let job = raw_job(a.job.trim()).to_string();
    let id = a.build_id.trim().to_string();
    let b: BuildRecord = inner.with_store(|s| {
        let all = s.builds(Some(&job))?;
        let Some(started) = all.iter().find(|b| b.build_id == id).map(|b| b.started) else {
            return Err(ToolError::input(if all.is_empty() {
                format!("no stored build of job {job:?}")
            } else {
                format!("job {job:?} has {} stored build(s) but not {id:?}", all.len())
            }));
        };
        let since = started.map(|s| s - 1);
        s.job_builds_with_tests(&job, since)?
            .into_iter()
            .find(|b| b.build_id == id)
            .ok_or_else(|| ToolError::other(format!("build {id} of {job} vanished while reading")))
    })?;
    let url = build_url(&b);
    let cfg = citriage_patterns::extract::ExtractConfig::default();
    let day = b.started.map(|s| Day::from_unix_seconds(s).to_string()).unwrap_or_default();
    let pg = page::page(a.cursor.as_deref(), a.limit, 6, 500)?;
    let failed: Vec<&citriage_store::StoredTest> =
        b.tests.iter().filter(|t| t.status == "failed" || t.status == "error").collect();
    let keys: Vec<String> = failed.iter().map(|t| format!("{}\n{}", t.file, t.name)).collect();
    let (range, info) = page::finish("extract_failure", a.cursor.as_deref(), pg, &keys)?;
    let first_page = range.start == 0;
    let excerpts = if !first_page {
        &b.excerpts[..0]
    } else if a.detail {
        &b.excerpts[..]
    } else {
        &b.excerpts[..b.excerpts.len().min(EXCERPTS)]
    };
    let mut evidence = vec![build_evidence(&b)];
    let mut logs = Vec::new();
    for e in excerpts {
        let ev = Evidence::new(
            EvidenceKind::BuildLogExcerpt,
            format!("{url}/{}:{}-{}", e.source, e.line_start, e.line_end),
            e.text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").chars().take(300).collect::<String>(),
            sha256_hex(e.text.as_bytes()),
            day.clone(),
        );
        let text = if a.detail { e.text.clone() } else { head_lines(&e.text, EXCERPT_LINES, EXCERPT_BYTES) };
        logs.push(json!({
            "source": e.source, "line_start": e.line_start, "line_end": e.line_end, "text": text,
            "cut": text.len() < e.text.len(), "evidence": [ev.id.clone()],
        }));
        evidence.push(ev);
    }
    let mut tests = Vec::new();
    for t in &failed[range.clone()] {
        let text = t.failure_text.clone().unwrap_or_default();
        let lines =
            citriage_patterns::extract::extract_junit(&text, "", &format!("{url}/{} :: {}", t.file, t.name), &cfg);
        let ev = (!text.trim().is_empty()).then(|| failure_evidence(&url, &t.name, &text, b.started));
        tests.push(json!({
            "test": t.name, "file": t.file, "status": t.status,
            "failure_lines": lines.iter().take(if a.detail { usize::MAX } else { 3 }).map(|x| json!({
                "line_start": x.line_start, "line_end": x.line_end,
                "text": if a.detail { x.text.clone() } else { head_lines(&x.text, 3, 300) },
            })).collect::<Vec<_>>(),
            "failure_lines_total": lines.len(),
            "evidence": ev.as_ref().map(|e| vec![e.id.clone()]).unwrap_or_default(),
        }));
        evidence.extend(ev);
    }
    let note = (b.excerpts.is_empty() && failed.is_empty())
        .then_some("nothing stored explains this build: no log excerpts and no failed test with a text");
    let mut v = json!({
        "job": b.dashboard_job(), "build_id": b.build_id, "url": url, "result": b.result, "started": b.started,
        "log_excerpts": logs, "log_excerpts_total": b.excerpts.len(), "failed_tests": tests,
        "failed_tests_total": failed.len(), "offset": range.start, "note": note,
    });
    if !a.detail {
        v["hint"] = json!(format!(
            "detail: true gives every log excerpt whole (the first {EXCERPTS} come cut to {EXCERPT_LINES} lines) \
             and every failure line of each test"
        ));
    }
    page::put(&mut v, info);
    Ok(Answer::new(v, evidence))
}

/// A stored payload analysis (kind `payload`, the JSON `citriage payload` recorded).
fn stored_analysis(store: &Store, tag: &str) -> Result<PayloadAnalysis, ToolError> {
    Ok(citriage_app::payload::stored_analysis(store, tag)?)
}

/// `analyze_payload`: a stored analysis, summarized, with the draft each row supports.
pub(crate) fn analyze_payload(inner: &Inner, a: &AnalyzePayload) -> Result<Answer, ToolError> {
    let Some(tag) = a.tag.as_deref().map(str::trim).filter(|t| !t.is_empty()) else {
        let view = inner.view();
        return Ok(Answer::new(json!({"streams": citriage_web::data::payloads(&view)}), Vec::new()));
    };
    let an = inner.with_store(|s| stored_analysis(s, tag))?;
    let evidence = payload_evidence(&an);
    let find = |pred: &dyn Fn(&Evidence) -> bool| -> Vec<String> {
        evidence.iter().filter(|e| pred(e)).map(|e| e.id.clone()).collect()
    };
    let rows = citriage_actions::payload::rows(&an);
    let root_causes: Vec<Value> = an
        .root_causes
        .iter()
        .map(|rc| {
            let ids: Vec<String> = rc
                .evidence
                .iter()
                .map(|(job, l)| {
                    citriage_actions::payload::line_evidence(&an, an.failed_jobs.iter().find(|j| &j.name == job), l).id
                })
                .collect();
            json!({
                "id": rc.id, "title": rc.title, "class": rc.class.class.as_str(), "reason": rc.class.reason,
                "jobs": rc.jobs, "first_failed_in": rc.first_failed_in, "systemic": rc.is_systemic,
                "no_candidate_reason": rc.no_candidate_reason, "evidence": ids,
            })
        })
        .collect();
    let suspects: Vec<Value> = an
        .suspects
        .iter()
        .map(|s| {
            let c = an.candidate(&s.candidate);
            let name = c.map(|c| c.short()).unwrap_or(s.candidate.clone());
            let row = rows.iter().find(|r| r.row == "suspect" && r.id == name && r.root_cause == s.root_cause);
            let cl = c.map(|c| citriage_actions::payload::changelog_evidence(&an, c).id);
            json!({
                "candidate": name, "title": c.map(|c| c.title.clone()), "url": c.and_then(|c| c.url.clone()),
                "root_cause": s.root_cause, "rank": s.rank, "score": s.score.total, "band": s.band.as_str(),
                "action": s.action.as_str(), "reason": s.action_reason, "cap": s.score.cap, "jobs": s.jobs,
                "items": if a.detail { json!(s.score.items.iter().map(|i| json!({"signal": i.signal.name(), "points": i.points, "evidence": i.evidence})).collect::<Vec<_>>()) } else { json!(s.score.items.iter().map(|i| format!("{} {:+}", i.signal.name(), i.points)).collect::<Vec<_>>()) },
                "draft": row.and_then(|r| r.draft), "refused": row.and_then(|r| r.refused.clone()),
                "evidence": cl.into_iter().collect::<Vec<_>>(),
            })
        })
        .collect();
    let failed: Vec<Value> = an
        .failed_jobs
        .iter()
        .map(|j| {
            json!({
                "name": j.name, "prow_job": j.prow_job, "url": j.url, "state": j.state.as_str(),
                "modes": j.modes.iter().map(|m| json!({
                    "summary": m.summary, "class": m.class.class.as_str(), "first_failed_in": m.first_failed_in,
                    "onset": m.before.describe(), "root_cause": m.root_cause,
                    "evidence": find(&|e| e.locator.ends_with(&format!("/results/blockingJobs/{}", j.name)) && e.excerpt.contains(&m.signature.id)),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut v = json!({
        "tag": an.payload.tag, "phase": an.payload.phase.as_str(), "release_url": an.payload.release_url,
        "verdict": an.decision.verdict.as_str(), "summary": an.decision.summary,
        "force_accept": an.decision.force_accept, "blocking": an.blocking, "baseline": an.baseline,
        "failed_jobs": failed, "root_causes": root_causes, "suspects": suspects,
        "rows": rows, "data_gaps": an.data_gaps,
        "stored_as": format!("payload/{}", an.payload.tag),
    });
    if a.detail {
        return Ok(Answer::new(v, evidence));
    }
    compact_payload(&mut v);
    // Only the evidence the compact answer cites.
    let mut cited = BTreeSet::new();
    evidence_ids(&v, &mut cited);
    let evidence = evidence.into_iter().filter(|e| cited.contains(e.id.as_str())).collect();
    Ok(Answer::new(v, evidence))
}

/// Suspects a compact payload answer lists (the ranked first).
const PAYLOAD_SUSPECTS: usize = 5;
/// Failed jobs a compact payload answer lists.
const PAYLOAD_JOBS: usize = 10;

/// A payload answer's compact form: one-line texts, the top suspects, no rows (each
/// suspect already says which draft it supports), the data gaps counted.
fn compact_payload(v: &mut Value) {
    let short = |x: &mut Value, max: usize| {
        if let Some(t) = x.as_str() {
            *x = json!(page::one_line(t, max));
        }
    };
    let n_jobs = v["failed_jobs"].as_array().map_or(0, Vec::len);
    if let Some(js) = v["failed_jobs"].as_array_mut() {
        js.truncate(PAYLOAD_JOBS);
        for j in js {
            if let Some(o) = j.as_object_mut() {
                o.remove("url");
            }
            for m in j["modes"].as_array_mut().into_iter().flatten() {
                short(&mut m["summary"], 160);
            }
        }
    }
    for rc in v["root_causes"].as_array_mut().into_iter().flatten() {
        short(&mut rc["title"], 160);
        short(&mut rc["reason"], 160);
    }
    let n = v["suspects"].as_array().map_or(0, Vec::len);
    if let Some(ss) = v["suspects"].as_array_mut() {
        ss.truncate(PAYLOAD_SUSPECTS);
        for s in ss {
            if let Some(o) = s.as_object_mut() {
                for k in ["url", "items", "jobs"] {
                    o.remove(k);
                }
            }
            short(&mut s["title"], 120);
            short(&mut s["reason"], 160);
            short(&mut s["refused"], 160);
        }
    }
    let gaps = v["data_gaps"].as_array().map_or(0, Vec::len);
    let rows = v["rows"].as_array().map_or(0, Vec::len);
    if let Some(o) = v.as_object_mut() {
        o.remove("rows");
        o.remove("data_gaps");
    }
    v["left_out"] = json!({
        "suspects": n.saturating_sub(PAYLOAD_SUSPECTS), "failed_jobs": n_jobs.saturating_sub(PAYLOAD_JOBS),
        "rows": rows, "data_gaps": gaps,
        "hint": "detail: true gives every failed job and suspect with its scored items, the draft rows and the data gaps",
    });
}

/// Every evidence id (`ev-` and 12 hex digits) in a value's strings.
fn evidence_ids<'a>(v: &'a Value, out: &mut BTreeSet<&'a str>) {
    match v {
        Value::String(s) if s.len() == 15 && s.starts_with("ev-") => {
            out.insert(s.as_str());
        }
        Value::Array(a) => a.iter().for_each(|x| evidence_ids(x, out)),
        Value::Object(o) => o.values().for_each(|x| evidence_ids(x, out)),
        _ => {}
    }
}

/// `pr_state`: the GitHub client over the store's cache, as `gh sweep --offline` reads.
pub(crate) fn pr_state(inner: &Inner, a: &PrStateArgs) -> Result<Answer, ToolError> {
    if a.refs.is_empty() || a.refs.len() > 50 {
        return Err(ToolError::input(format!("refs: give 1 to 50 references, not {}", a.refs.len())));
    }
    let store = Store::open(&inner.db)?;
    let online = inner.opts.github_online;
    let (rows, ev) = citriage_app::gh::pr_states(store, &a.refs, &inner.opts.api, online)?;
    Ok(Answer::new(json!({"offline": !online, "refs": rows}), ev))
}

/// `verify_report`: the verifier `verify --offline --format json` runs, recording
/// nothing but the evidence.
pub(crate) fn verify_report(inner: &Inner, a: &VerifyReport) -> Result<Answer, ToolError> {
    if a.text.len() > 1 << 20 {
        return Err(ToolError::input(format!("text is {} bytes, the limit is 1 MiB", a.text.len())));
    }
    let name = a.name.clone().filter(|n| !n.trim().is_empty()).unwrap_or_else(|| "report.md".into());
    let store = Store::open(&inner.db)?;
    let checked = citriage_app::verify::check_text(store, &a.text, &name, &inner.opts.api, inner.opts.github_online)?;
    let v: Value = serde_json::from_str(&checked.json).map_err(|e| ToolError::other(e.to_string()))?;
    Ok(Answer::new(v, checked.evidence()))
}

/// `list_records`: the triage records (`citriage triage records`), a page at a time;
/// compact by default (state, since, the reason's first line, counts), `detail` gives
/// each record whole (links, timeline, fix).
pub(crate) fn list_records(inner: &Inner, a: &ListRecords) -> Result<Answer, ToolError> {
    let pg = page::page(a.cursor.as_deref(), a.limit, 25, 200)?;
    let opts = citriage_app::records::ListOptions { state: a.state.clone(), open_only: a.open, ..Default::default() };
    let records = inner.with_store(|s| Ok(citriage_app::records::list(s, &opts)?))?;
    let keys: Vec<String> = records.iter().map(|r| r.record.subject.clone()).collect();
    let (range, info) = page::finish("list_records", a.cursor.as_deref(), pg, &keys)?;
    let page: Vec<Value> =
        records[range.clone()].iter().map(|r| if a.detail { json!(r) } else { compact_record(r) }).collect();
    let mut v = json!({ "records": page, "matching": records.len(), "offset": range.start });
    if !a.detail {
        v["hint"] = json!("detail: true gives each record's links, timeline and fix");
    }
    page::put(&mut v, info);
    Ok(Answer::new(v, Vec::new()))
}

fn compact_record(r: &citriage_app::records::RecordView) -> Value {
    let s = &r.summary;
    json!({
        "subject": r.record.subject, "title": page::one_line(&r.record.title, 160), "state": r.record.state,
        "since": r.record.since, "age": r.age, "reason": page::one_line(&s.reason, 200), "evidence": s.evidence,
        "links": r.links.len(), "transitions": r.transitions.len(),
    })
}

/// `find_suspects`: the regression windows of a pattern or a job (no checkout is read),
/// the jobs' windows a page at a time; each job's end builds are cited. Compact by
/// default (the failure's first cited lines, the first tests and jobs, counts of the
/// rest); `detail` gives them all.
pub(crate) fn find_suspects(inner: &Inner, a: &FindSuspects) -> Result<Answer, ToolError> {
    let pg = page::page(a.cursor.as_deref(), a.limit, 6, 200)?;
    let opts = citriage_app::suspects::SuspectsOptions {
        target: a.target.trim().to_string(),
        profile: citriage_app::cluster::parse_profile(a.profile.as_deref().unwrap_or("default"))?,
        checkouts: Vec::new(),
    };
    let found = inner.with_store(|s| Ok(citriage_app::suspects::suspects(s, &opts, &citriage_app::Silent)?))?;
    let keys: Vec<String> = found.jobs.iter().map(|j| j.job.clone()).collect();
    let (range, info) = page::finish("find_suspects", a.cursor.as_deref(), pg, &keys)?;
    let ev = inner.with_store(|s| {
        let mut ev: BTreeMap<(String, String), Evidence> = BTreeMap::new();
        for j in &found.jobs[range.clone()] {
            let ids: BTreeSet<&str> = j.last_pass.iter().chain([&j.first_fail]).map(|e| e.build_id.as_str()).collect();
            for (id, e) in builds_evidence(s, &j.job, &ids)? {
                ev.insert((j.job.clone(), id), e);
            }
        }
        Ok(ev)
    })?;
    let mut v = serde_json::to_value(&found).map_err(|e| ToolError::other(e.to_string()))?;
    let jobs: Vec<Value> = v["jobs"].as_array().map(|js| js[range.clone()].to_vec()).unwrap_or_default();
    v["jobs"] = json!(jobs);
    if let Some(jobs) = v["jobs"].as_array_mut() {
        for j in jobs {
            let job = j["job"].as_str().unwrap_or_default().to_string();
            for end in ["last_pass", "first_fail"] {
                let id = j[end]["build_id"].as_str().map(str::to_string);
                if let Some(e) = id.and_then(|id| ev.get(&(job.clone(), id))) {
                    j[end]["evidence"] = json!([e.id.clone()]);
                }
            }
        }
    }
    if !a.detail {
        compact_suspects(&mut v);
    }
    v["jobs_total"] = json!(found.jobs.len());
    v["offset"] = json!(range.start);
    page::put(&mut v, info);
    Ok(Answer::new(v, ev.into_values().collect()))
}

/// Windows a compact `find_suspects` gives (the rest are counted).
const SUSPECT_WINDOWS: usize = 5;

/// Keeps the first few of each long list of a suspects answer and counts the rest;
/// each job's ends keep their build, start and evidence (the commits they tested are
/// in the windows), each window its ends, jobs and compare URL.
fn compact_suspects(v: &mut Value) {
    fn first(v: &mut Value, key: &str, n: usize) {
        if let Some(list) = v[key].as_array_mut() {
            if list.len() > n {
                let total = list.len();
                list.truncate(n);
                v[format!("{key}_total")] = json!(total);
            }
        }
    }
    first(v, "failure", 3);
    if let Some(lines) = v["failure"].as_array_mut() {
        for l in lines {
            if let Some(t) = l["text"].as_str() {
                l["text"] = json!(page::one_line(t, 240));
            }
        }
    }
    first(v, "tests", 10);
    first(v, "windows", SUSPECT_WINDOWS);
    if let Some(ws) = v["windows"].as_array_mut() {
        for w in ws {
            first(&mut w["window"], "jobs", 5);
            first(&mut w["window"], "pulls", 5);
            // Each end's bounding jobs by name (their builds and commits are in `jobs`).
            for end in ["good", "bad"] {
                if let Some(by) = w["window"][end]["by"].as_array_mut() {
                    *by = by.iter().take(3).map(|b| b[0].clone()).collect();
                }
            }
            if let Some(o) = w.as_object_mut() {
                // No checkout is read here: these are always empty, and the note says so once below.
                for k in ["checkout", "commits", "test_sources", "notes"] {
                    o.remove(k);
                }
            }
        }
    }
    if let Some(jobs) = v["jobs"].as_array_mut() {
        for j in jobs {
            first(j, "notes", 2);
            for end in ["last_pass", "first_fail"] {
                if let Some(o) = j[end].as_object_mut() {
                    o.remove("tested");
                }
            }
        }
    }
    v["hint"] = json!(
        "no checkout is read here (`citriage suspects --checkout ORG/REPO=PATH` ranks a window's commits); \
         detail: true gives every cited failure line, test, window with its notes, and the commits each end tested"
    );
}

/// `lookup_evidence`: the ledger's entries.
pub(crate) fn lookup_evidence(inner: &Inner, a: &LookupEvidence) -> Result<Answer, ToolError> {
    if a.ids.is_empty() || a.ids.len() > 200 {
        return Err(ToolError::input(format!("ids: give 1 to 200 ids, not {}", a.ids.len())));
    }
    let (found, missing) = inner.with_store(|s| {
        let mut found = Vec::new();
        let mut missing = Vec::new();
        for id in &a.ids {
            match s.evidence(id.trim())? {
                Some(e) => found.push(e),
                None => missing.push(id.clone()),
            }
        }
        Ok((found, missing))
    })?;
    Ok(Answer::new(json!({"found": found, "missing": missing}), Vec::new()))
}

/// Drafts the action the arguments name.
pub(crate) fn draft(inner: &Inner, a: &DraftAction) -> Result<Vec<Draft>, ToolError> {
    let refused = |r: citriage_actions::Refusal| ToolError::input(r.message());
    let opts = PayloadOptions { repo: a.repo.clone(), ..PayloadOptions::default() };
    match (a.action, &a.payload, &a.pattern) {
        (ActionArg::Bug, None, Some(p)) => {
            let view = inner.view();
            let profile = profile_of(&view, a.profile.as_deref())?;
            let facts = inner.with_store(|s| pattern_facts(&view, s, &profile, p.trim()))?;
            let routing = BugRouting {
                repo: a.repo.clone(),
                default_repo: inner.opts.issue_repo.clone().unwrap_or_else(|| BugRouting::default().default_repo),
            };
            Ok(vec![citriage_actions::pattern::bug(&facts, &routing).map_err(refused)?])
        }
        (_, Some(tag), None) => {
            let an = inner.with_store(|s| stored_analysis(s, tag.trim()))?;
            match a.action {
                ActionArg::Revert => {
                    let who =
                        a.suspect.as_deref().ok_or_else(|| ToolError::input("a revert needs suspect (org/repo#n)"))?;
                    Ok(vec![citriage_actions::payload::revert(&an, who, &opts).map_err(refused)?])
                }
                ActionArg::Bisect => {
                    Ok(citriage_actions::payload::bisect(&an, a.suspect.as_deref(), &opts).map_err(refused)?.drafts)
                }
                ActionArg::Bug => {
                    let rc = a
                        .root_cause
                        .as_deref()
                        .ok_or_else(|| ToolError::input("a payload bug needs root_cause (e.g. RC1)"))?;
                    Ok(vec![citriage_actions::payload::root_cause_bug(&an, rc, &opts).map_err(refused)?])
                }
            }
        }
        _ => Err(ToolError::input(
            "say what the action is about: payload (with suspect or root_cause), or pattern (for a bug)",
        )),
    }
}

fn drafts_answer(drafts: &[Draft], extra: Value) -> Answer {
    let evidence: Vec<Evidence> = drafts.iter().flat_map(|d| d.evidence()).collect();
    let ds: Vec<Value> = drafts
        .iter()
        .map(|d| {
            let mut v = serde_json::to_value(d).unwrap_or(Value::Null);
            v["markdown"] = json!(d.markdown());
            v
        })
        .collect();
    Answer::new(json!({"drafts": ds, "applied": extra}), evidence)
}

/// `draft_action`: the drafts, sent nowhere.
pub(crate) fn draft_action(inner: &Inner, a: &DraftAction) -> Result<Answer, ToolError> {
    let drafts = draft(inner, a)?;
    Ok(drafts_answer(&drafts, Value::Null))
}

/// `apply_action`: drafts, checks the caller may write, then sends each draft's
/// requests as `act --apply` does (the log of what is sent goes to stderr: stdout may
/// be the protocol's channel).
pub(crate) fn apply_action(
    inner: &Inner,
    a: &DraftAction,
    parts: Option<&http::request::Parts>,
) -> Result<Answer, ToolError> {
    let who = inner.opts.writes.allows(parts).map_err(ToolError::input)?;
    let drafts = draft(inner, a)?;
    let mut applied = Vec::new();
    for d in &drafts {
        if let Some(why) = &d.apply_blocked {
            return Err(ToolError::input(format!("{}: cannot be applied: {why}", d.name)));
        }
        let sent = citriage_app::act::apply(d, &inner.opts.api, &mut std::io::stderr())?;
        let sent = serde_json::to_value(&sent).map_err(|e| ToolError::other(e.to_string()))?;
        applied.push(json!({"draft": d.name, "by": who, "sent": sent}));
    }
    Ok(drafts_answer(&drafts, json!(applied)))
}
