//! The tools' answers. Each reads the figures from the code that computes them for
//! the dashboard and the CLI (the dashboard's view and data functions, the analysis
//! crate's categories, the stored payload analyses, the use cases of `citriage-app`)
//! and adds the evidence items the answer rests on.

use crate::args::{
    ActionArg, AnalyzePayload, DatasetArg, DraftAction, ExtractFailure, FindSuspects, GetPattern, JobHistory,
    ListFailingJobs, ListPatterns, ListRecords, LookupEvidence, PrStateArgs, SearchFailures, SortArg, TestHistory,
    VerifyReport, WithinArg,
};
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
    fn new(result: Value, mut evidence: Vec<Evidence>) -> Answer {
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

/// `list_failing_jobs`: the newest snapshot, categorized with the built-in rules as
/// the dashboard's overview does, with each job's build figures from the view.
pub(crate) fn list_failing_jobs(inner: &Inner, a: &ListFailingJobs) -> Result<Answer, ToolError> {
    let dataset = ds(a.dataset);
    let limit = bounded(a.limit, 100, 1000, "limit")?;
    if let Some(w) = a.window_days {
        if !(1..=365).contains(&w) {
            return Err(ToolError::input(format!("window_days must be 1 to 365, not {w}")));
        }
    }
    let view = inner.view();
    let snap = inner.with_store(|s| {
        let latest = s.latest(dataset)?.ok_or_else(|| {
            ToolError::input(format!("no {dataset} snapshot is stored (import one with `citriage import`)"))
        })?;
        Ok(s.load_snapshot(latest.id)?)
    })?;
    let cats = categorize_snapshot(&snap, &RuleSet::builtin());
    let owners = owners_by_job(&view);
    let since = match (a.window_days, view.as_of) {
        (Some(w), Some(end)) => Some(end - i64::from(w) * citriage_model::time::DAY),
        (Some(_), None) => Some(i64::MAX),
        _ => None,
    };
    let field = match dataset {
        Dataset::Failures => "failing_days",
        Dataset::Flakes => "consistency",
    };
    let mut rows = Vec::new();
    let mut evidence = Vec::new();
    let mut matching = 0usize;
    for c in &cats.categories {
        if a.category.as_deref().is_some_and(|want| !want.eq_ignore_ascii_case(&c.name)) {
            continue;
        }
        for j in &c.jobs {
            let name = j.entry.job.as_str();
            let own = owners.get(name);
            if let Some(o) = &a.owner {
                let o = sig_name(o);
                if !own.is_some_and(|s| s.iter().any(|x| sig_name(x).eq_ignore_ascii_case(o))) {
                    continue;
                }
            }
            let ji = view.job(raw_job(name));
            if let Some(since) = since {
                let recent = ji.is_some_and(|ji| {
                    view.builds[ji.builds.clone()].iter().any(|b| {
                        matches!(b.result.as_deref(), Some("FAILURE") | Some("ERROR"))
                            && b.started.is_some_and(|s| s > since)
                    })
                });
                if !recent {
                    continue;
                }
            }
            matching += 1;
            if rows.len() >= limit {
                continue;
            }
            let ev = entry_evidence(&snap, name, &[field], entry_excerpt(&j.entry.stats));
            rows.push(json!({
                "job": name,
                "category": c.name,
                "severity": j.severity.as_str(),
                "stats": j.entry.stats,
                "owners": own.map(|s| s.iter().copied().collect::<Vec<_>>()).unwrap_or_default(),
                "builds": ji.map(|ji| &ji.summary),
                "evidence": [ev.id.clone()],
            }));
            evidence.push(ev);
        }
    }
    let by_category: Vec<Value> = cats.categories.iter().map(|c| json!({"name": c.name, "count": c.count()})).collect();
    let mut by_severity: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &snap.jobs {
        *by_severity.entry(severity::of(&e.stats).as_str()).or_insert(0) += 1;
    }
    Ok(Answer::new(
        json!({
            "dataset": dataset,
            "date": snap.meta.date,
            "source": snap.meta.source,
            "jobs_in_snapshot": snap.jobs.len(),
            "by_category": by_category,
            "by_severity": by_severity,
            "matching": matching,
            "jobs": rows,
        }),
        evidence,
    ))
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

/// `job_history`: the dashboard's job page data.
pub(crate) fn job_history(inner: &Inner, a: &JobHistory) -> Result<Answer, ToolError> {
    let n = bounded(a.builds, 20, 200, "builds")?;
    let view = inner.view();
    let job = raw_job(a.job.trim());
    let mut d = citriage_web::data::job(&view, job)?;
    d.builds.truncate(n);
    let ids: BTreeSet<&str> = d.builds.iter().map(|b| b.build_id.as_str()).collect();
    let ev = inner.with_store(|s| builds_evidence(s, job, &ids))?;
    let mut v = serde_json::to_value(&d).map_err(|e| ToolError::other(e.to_string()))?;
    if let Some(builds) = v["builds"].as_array_mut() {
        for b in builds {
            let id = b["build_id"].as_str().and_then(|i| ev.get(i)).map(|e| e.id.clone());
            b["evidence"] = json!(id.into_iter().collect::<Vec<_>>());
        }
    }
    Ok(Answer::new(v, ev.into_values().collect()))
}

/// `test_history`: the dashboard's test page data; failed runs cite their builds.
pub(crate) fn test_history(inner: &Inner, a: &TestHistory) -> Result<Answer, ToolError> {
    let n = bounded(a.runs, 20, 200, "runs")?;
    let view = inner.view();
    let mut h = citriage_web::data::test_history(&view, a.name.trim())?;
    for j in &mut h.jobs {
        j.history.truncate(n);
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
pub(crate) fn search_failures(inner: &Inner, a: &SearchFailures) -> Result<Answer, ToolError> {
    let mut p = BTreeMap::new();
    p.insert("q".to_string(), a.q.clone());
    put(&mut p, "job", a.job.clone());
    put(&mut p, "exclude_job", a.exclude_job.clone());
    put(&mut p, "max_age_days", a.max_age_days.map(|d| d.to_string()));
    p.insert("max".to_string(), bounded(a.max, 50, 1000, "max")?.to_string());
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
    let r = citriage_web::data::search(&view, &q);
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
            m["evidence"] = json!([e.id.clone()]);
            evidence.push(e);
        }
    }
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
/// sub-patterns; each pattern cites its newest failure.
pub(crate) fn list_patterns(inner: &Inner, a: &ListPatterns) -> Result<Answer, ToolError> {
    let view = inner.view();
    let profile = profile_of(&view, a.profile.as_deref())?;
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
    p.insert("limit".to_string(), bounded(a.limit, 20, 100, "limit")?.to_string());
    let q = citriage_web::data::ClusterQuery::parse(&p)?;
    let list = citriage_web::data::clusters(&view, &q)?;
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
        for (c, (sub, d, ev)) in cs.iter_mut().zip(extra) {
            c["sub_patterns"] = sub;
            c["drift"] = d;
            c["evidence"] = json!(ev.into_iter().collect::<Vec<_>>());
        }
    }
    v["drift_window"] = json!({"from": drift.from, "to": drift.to, "span_days": drift.span_days});
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

/// `get_pattern`: one pattern as the dashboard's page shows it.
pub(crate) fn get_pattern(inner: &Inner, a: &GetPattern) -> Result<Answer, ToolError> {
    let view = inner.view();
    let profile = profile_of(&view, a.profile.as_deref())?;
    let (d, latest) = pattern_detail(inner, &view, &profile, a.id.trim())?;
    let ev: Vec<Evidence> = latest.iter().map(|f| failure_of(f).evidence()).collect();
    let mut v = serde_json::to_value(&d).map_err(|e| ToolError::other(e.to_string()))?;
    if let Some(ls) = v["latest"].as_array_mut() {
        for (l, e) in ls.iter_mut().zip(&ev) {
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

/// `extract_failure`: a stored build's log excerpts and its failed tests' failure lines.
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
    let mut evidence = vec![build_evidence(&b)];
    let mut logs = Vec::new();
    for e in &b.excerpts {
        let ev = Evidence::new(
            EvidenceKind::BuildLogExcerpt,
            format!("{url}/{}:{}-{}", e.source, e.line_start, e.line_end),
            e.text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").chars().take(300).collect::<String>(),
            sha256_hex(e.text.as_bytes()),
            day.clone(),
        );
        logs.push(json!({
            "source": e.source, "line_start": e.line_start, "line_end": e.line_end, "text": e.text,
            "evidence": [ev.id.clone()],
        }));
        evidence.push(ev);
    }
    let mut tests = Vec::new();
    for t in b.tests.iter().filter(|t| t.status == "failed" || t.status == "error") {
        let text = t.failure_text.clone().unwrap_or_default();
        let lines =
            citriage_patterns::extract::extract_junit(&text, "", &format!("{url}/{} :: {}", t.file, t.name), &cfg);
        let ev = (!text.trim().is_empty()).then(|| failure_evidence(&url, &t.name, &text, b.started));
        tests.push(json!({
            "test": t.name, "file": t.file, "status": t.status,
            "failure_lines": lines.iter().map(|x| json!({"line_start": x.line_start, "line_end": x.line_end, "text": x.text})).collect::<Vec<_>>(),
            "evidence": ev.as_ref().map(|e| vec![e.id.clone()]).unwrap_or_default(),
        }));
        evidence.extend(ev);
    }
    Ok(Answer::new(
        json!({
            "job": b.dashboard_job(), "build_id": b.build_id, "url": url, "result": b.result, "started": b.started,
            "log_excerpts": logs, "failed_tests": tests,
            "note": if logs.is_empty() && tests.is_empty() { Some("nothing stored explains this build: no log excerpts and no failed test with a text") } else { None },
        }),
        evidence,
    ))
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
                "items": s.score.items.iter().map(|i| json!({"signal": i.signal.name(), "points": i.points, "evidence": i.evidence})).collect::<Vec<_>>(),
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
    Ok(Answer::new(
        json!({
            "tag": an.payload.tag, "phase": an.payload.phase.as_str(), "release_url": an.payload.release_url,
            "verdict": an.decision.verdict.as_str(), "summary": an.decision.summary,
            "force_accept": an.decision.force_accept, "blocking": an.blocking, "baseline": an.baseline,
            "failed_jobs": failed, "root_causes": root_causes, "suspects": suspects,
            "rows": rows, "data_gaps": an.data_gaps,
            "stored_as": format!("payload/{}", an.payload.tag),
        }),
        evidence,
    ))
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

/// `list_records`: the triage records (`citriage triage records`).
pub(crate) fn list_records(inner: &Inner, a: &ListRecords) -> Result<Answer, ToolError> {
    let opts = citriage_app::records::ListOptions { state: a.state.clone(), open_only: a.open, ..Default::default() };
    let records = inner.with_store(|s| Ok(citriage_app::records::list(s, &opts)?))?;
    Ok(Answer::new(json!({ "records": records }), Vec::new()))
}

/// `find_suspects`: the regression windows of a pattern or a job (no checkout is read);
/// each job's end builds are cited.
pub(crate) fn find_suspects(inner: &Inner, a: &FindSuspects) -> Result<Answer, ToolError> {
    let opts = citriage_app::suspects::SuspectsOptions {
        target: a.target.trim().to_string(),
        profile: citriage_app::cluster::parse_profile(a.profile.as_deref().unwrap_or("default"))?,
        checkouts: Vec::new(),
    };
    let (found, ev) = inner.with_store(|s| {
        let found = citriage_app::suspects::suspects(s, &opts, &citriage_app::Silent)?;
        let mut ev: BTreeMap<(String, String), Evidence> = BTreeMap::new();
        for j in &found.jobs {
            let ids: BTreeSet<&str> = j.last_pass.iter().chain([&j.first_fail]).map(|e| e.build_id.as_str()).collect();
            for (id, e) in builds_evidence(s, &j.job, &ids)? {
                ev.insert((j.job.clone(), id), e);
            }
        }
        Ok((found, ev))
    })?;
    let mut v = serde_json::to_value(&found).map_err(|e| ToolError::other(e.to_string()))?;
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
    Ok(Answer::new(v, ev.into_values().collect()))
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
