//! The data behind every page, read from the store and shaped for both the JSON API
//! and the HTML pages: the overview (latest snapshots, counts by category and
//! severity, drift since the previous snapshot, newest patterns), jobs with their
//! build history and daily pass rates, and the stored failure clusters with filters.
//! Everything is ordered deterministically.

use crate::WebError;
use citriage_analysis::{categorize_snapshot, severity, RuleSet};
use citriage_model::build::BuildRecord;
use citriage_model::{Dataset, Day};
use citriage_store::Store;
use serde::Serialize;
use std::collections::BTreeMap;

/// Builds shown on a job page (newest first).
pub const MAX_JOB_BUILDS: usize = 200;
/// Days of the pass-rate chart.
pub const CHART_DAYS: usize = 30;
/// Most clusters one answer carries.
pub const MAX_CLUSTERS: usize = 1000;

/// The Spyglass page of a build.
pub fn spyglass_url(b: &BuildRecord) -> String {
    format!("https://prow.k8s.io/view/gs/{}/{}", b.bucket, b.path)
}

/// A build's outcome as the history strip colours it.
pub fn outcome(result: Option<&str>) -> &'static str {
    match result {
        Some("SUCCESS") => "pass",
        Some("FAILURE") => "fail",
        Some("ERROR") => "error",
        Some("ABORTED") => "aborted",
        _ => "unknown",
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Count {
    pub name: String,
    pub count: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct DriftSummary {
    pub prior_date: Day,
    /// Jobs listed now but not in the prior snapshot, sorted.
    pub added: Vec<String>,
    /// Jobs listed in the prior snapshot but not now, sorted.
    pub removed: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DatasetOverview {
    pub dataset: Dataset,
    pub date: Day,
    pub source: String,
    pub jobs: usize,
    /// Worst first, every level listed.
    pub by_severity: Vec<Count>,
    /// Largest first, ties by name (the built-in rules).
    pub by_category: Vec<Count>,
    /// `None` when no earlier snapshot of the dataset is stored.
    pub drift: Option<DriftSummary>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ClusterRow {
    pub profile: String,
    pub stable_id: String,
    pub k8s_id: String,
    /// The normalized failure text.
    pub key: String,
    /// Failures in the cluster when it was last computed.
    pub size: u64,
    pub first_seen: i64,
    pub last_seen: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Overview {
    pub snapshots: Vec<DatasetOverview>,
    pub builds: u64,
    pub test_results: u64,
    pub build_jobs: usize,
    pub clusters: usize,
    /// The ten clusters first seen most recently.
    pub newest_clusters: Vec<ClusterRow>,
}

/// Cluster profiles the `cluster` command writes.
pub const PROFILES: &[&str] = &["default", "k8s-triage"];

fn all_clusters(store: &Store) -> Result<Vec<ClusterRow>, WebError> {
    let mut out = Vec::new();
    for p in PROFILES {
        for c in store.clusters(p)? {
            out.push(ClusterRow {
                profile: (*p).to_string(),
                stable_id: c.stable_id,
                k8s_id: c.k8s_id,
                key: c.key,
                size: c.size,
                first_seen: c.first_seen,
                last_seen: c.last_seen,
            });
        }
    }
    Ok(out)
}

/// The overview page's data.
pub fn overview(store: &mut Store) -> Result<Overview, WebError> {
    let rules = RuleSet::builtin();
    let mut snapshots = Vec::new();
    for ds in [Dataset::Failures, Dataset::Flakes] {
        let Some(latest) = store.latest(ds)? else { continue };
        let snap = store.load_snapshot(latest.id)?;
        let mut sev: BTreeMap<severity::Severity, usize> = BTreeMap::new();
        for e in &snap.jobs {
            *sev.entry(severity::of(&e.stats)).or_insert(0) += 1;
        }
        let by_severity = severity::Severity::ALL
            .iter()
            .map(|s| Count { name: s.as_str().to_string(), count: sev.get(s).copied().unwrap_or(0) })
            .collect();
        let by_category = categorize_snapshot(&snap, &rules)
            .categories
            .iter()
            .map(|c| Count { name: c.name.clone(), count: c.count() })
            .collect();
        let drift = match store.previous(ds, latest.date)? {
            None => None,
            Some(prev) => {
                let now = store.snapshot_job_names(latest.id)?;
                let before = store.snapshot_job_names(prev.id)?;
                Some(DriftSummary {
                    prior_date: prev.date,
                    added: now.difference(&before).cloned().collect(),
                    removed: before.difference(&now).cloned().collect(),
                })
            }
        };
        snapshots.push(DatasetOverview {
            dataset: ds,
            date: latest.date,
            source: latest.source,
            jobs: snap.jobs.len(),
            by_severity,
            by_category,
            drift,
        });
    }
    let (builds, test_results, _) = store.build_counts()?;
    let build_jobs = store.build_jobs()?.len();
    let mut clusters = all_clusters(store)?;
    let count = clusters.len();
    clusters
        .sort_by(|a, b| b.first_seen.cmp(&a.first_seen).then(b.size.cmp(&a.size)).then(a.stable_id.cmp(&b.stable_id)));
    clusters.truncate(10);
    Ok(Overview { snapshots, builds, test_results, build_jobs, clusters: count, newest_clusters: clusters })
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct JobSummary {
    pub job: String,
    pub builds: usize,
    pub passed: usize,
    pub failed: usize,
    pub errored: usize,
    pub aborted: usize,
    /// Builds without a result yet.
    pub unknown: usize,
    /// Passed over finished (passed, failed, errored) builds; `None` when none finished.
    pub pass_rate: Option<f64>,
    pub last_started: Option<i64>,
    pub last_outcome: String,
}

fn summarize(job: &str, builds: &[BuildRecord]) -> JobSummary {
    let mut s = JobSummary { job: job.to_string(), builds: builds.len(), ..JobSummary::default() };
    for b in builds {
        match outcome(b.result.as_deref()) {
            "pass" => s.passed += 1,
            "fail" => s.failed += 1,
            "error" => s.errored += 1,
            "aborted" => s.aborted += 1,
            _ => s.unknown += 1,
        }
    }
    let finished = s.passed + s.failed + s.errored;
    s.pass_rate = (finished > 0).then(|| round3(s.passed as f64 / finished as f64));
    // Builds come oldest first.
    if let Some(last) = builds.last() {
        s.last_started = last.started;
        s.last_outcome = outcome(last.result.as_deref()).to_string();
    }
    s
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Every job with stored builds, by name.
pub fn jobs(store: &mut Store) -> Result<Vec<JobSummary>, WebError> {
    let all = store.builds(None)?;
    let mut by_job: BTreeMap<&str, Vec<BuildRecord>> = BTreeMap::new();
    for b in &all {
        by_job.entry(b.job.as_str()).or_default().push(b.clone());
    }
    Ok(by_job.iter().map(|(j, bs)| summarize(j, bs)).collect())
}

#[derive(Debug, Clone, Serialize)]
pub struct BuildRow {
    pub build_id: String,
    pub outcome: String,
    pub result: Option<String>,
    pub started: Option<i64>,
    pub duration: Option<i64>,
    pub pr: Option<u64>,
    pub failed_tests: usize,
    pub url: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct DayRate {
    pub day: Day,
    pub passed: usize,
    /// Finished builds (passed, failed, errored) started that day.
    pub finished: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct JobDetail {
    pub summary: JobSummary,
    /// Newest first, at most [`MAX_JOB_BUILDS`].
    pub builds: Vec<BuildRow>,
    /// Oldest first, the last [`CHART_DAYS`] days that have builds.
    pub daily: Vec<DayRate>,
    /// The tests failing most often in the builds shown (most first, ties by name; at most 20).
    pub failing_tests: Vec<Count>,
}

/// One job's history; unknown jobs are a 404.
pub fn job(store: &mut Store, job: &str) -> Result<JobDetail, WebError> {
    let builds = store.job_builds_with_tests_opts(job, None, false)?;
    if builds.is_empty() {
        return Err(WebError::NotFound(format!("no stored builds of job {job:?}")));
    }
    let summary = summarize(job, &builds);
    let mut daily: BTreeMap<Day, DayRate> = BTreeMap::new();
    for b in &builds {
        let Some(t) = b.started else { continue };
        let o = outcome(b.result.as_deref());
        if !matches!(o, "pass" | "fail" | "error") {
            continue;
        }
        let day = Day::from_unix_seconds(t);
        let e = daily.entry(day).or_insert(DayRate { day, passed: 0, finished: 0 });
        e.finished += 1;
        e.passed += usize::from(o == "pass");
    }
    let mut daily: Vec<DayRate> = daily.into_values().collect();
    let skip = daily.len().saturating_sub(CHART_DAYS);
    daily.drain(..skip);
    let rows = builds
        .iter()
        .rev()
        .take(MAX_JOB_BUILDS)
        .map(|b| BuildRow {
            build_id: b.build_id.clone(),
            outcome: outcome(b.result.as_deref()).to_string(),
            result: b.result.clone(),
            started: b.started,
            duration: b.duration,
            pr: b.pr,
            failed_tests: b.tests.iter().filter(|t| t.status == "failed" || t.status == "error").count(),
            url: spyglass_url(b),
        })
        .collect();
    let mut failing: BTreeMap<&str, usize> = BTreeMap::new();
    for b in builds.iter().rev().take(MAX_JOB_BUILDS) {
        for t in b.tests.iter().filter(|t| t.status == "failed" || t.status == "error") {
            *failing.entry(t.name.as_str()).or_insert(0) += 1;
        }
    }
    let mut failing_tests: Vec<Count> =
        failing.into_iter().map(|(name, count)| Count { name: name.to_string(), count }).collect();
    failing_tests.sort_by(|a, b| b.count.cmp(&a.count).then(a.name.cmp(&b.name)));
    failing_tests.truncate(20);
    Ok(JobDetail { summary, builds: rows, daily, failing_tests })
}

/// How the cluster list is sorted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClusterSort {
    /// Most failures first.
    Size,
    /// Most recently seen first.
    LastSeen,
    /// Most recently appeared first.
    FirstSeen,
}

/// The cluster list's filters, as given in the query string.
#[derive(Debug, Clone)]
pub struct ClusterQuery {
    /// `None`: every profile.
    pub profile: Option<String>,
    pub include: Option<regex::Regex>,
    pub exclude: Option<regex::Regex>,
    pub sort: ClusterSort,
    pub limit: usize,
}

impl ClusterQuery {
    /// Reads `profile`, `include`, `exclude` (regexes on the failure text), `sort`
    /// (`size`, `last_seen`, `first_seen`) and `limit`; empty values are ignored.
    pub fn parse(p: &BTreeMap<String, String>) -> Result<ClusterQuery, WebError> {
        let get = |k: &str| p.get(k).map(|v| v.trim()).filter(|v| !v.is_empty());
        let profile = match get("profile") {
            None => None,
            Some(v) if PROFILES.contains(&v) => Some(v.to_string()),
            Some(v) => {
                return Err(WebError::BadRequest(format!(
                    "unknown profile {v:?} (expected one of {})",
                    PROFILES.join(", ")
                )))
            }
        };
        let sort = match get("sort") {
            None | Some("size") => ClusterSort::Size,
            Some("last_seen") => ClusterSort::LastSeen,
            Some("first_seen") => ClusterSort::FirstSeen,
            Some(v) => {
                return Err(WebError::BadRequest(format!(
                    "unknown sort {v:?} (expected size, last_seen or first_seen)"
                )))
            }
        };
        let limit = match get("limit") {
            None => 100,
            Some(v) => match v.parse::<usize>() {
                Ok(n) if (1..=MAX_CLUSTERS).contains(&n) => n,
                _ => return Err(WebError::BadRequest(format!("limit must be 1 to {MAX_CLUSTERS}, not {v:?}"))),
            },
        };
        Ok(ClusterQuery {
            profile,
            include: get("include").map(|v| crate::search::bounded_regex("include", v)).transpose()?,
            exclude: get("exclude").map(|v| crate::search::bounded_regex("exclude", v)).transpose()?,
            sort,
            limit,
        })
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ClusterList {
    pub sort: ClusterSort,
    /// Clusters matching the filters.
    pub matching: usize,
    /// Clusters stored.
    pub total: usize,
    pub clusters: Vec<ClusterRow>,
}

/// The stored clusters, filtered and sorted (ties by stable id).
pub fn clusters(store: &mut Store, q: &ClusterQuery) -> Result<ClusterList, WebError> {
    let all = all_clusters(store)?;
    let total = all.len();
    let mut rows: Vec<ClusterRow> = all
        .into_iter()
        .filter(|c| q.profile.as_deref().map_or(true, |p| c.profile == p))
        .filter(|c| q.include.as_ref().map_or(true, |r| r.is_match(&c.key)))
        .filter(|c| q.exclude.as_ref().map_or(true, |r| !r.is_match(&c.key)))
        .collect();
    rows.sort_by(|a, b| {
        let primary = match q.sort {
            ClusterSort::Size => b.size.cmp(&a.size),
            ClusterSort::LastSeen => b.last_seen.cmp(&a.last_seen),
            ClusterSort::FirstSeen => b.first_seen.cmp(&a.first_seen),
        };
        primary.then(b.size.cmp(&a.size)).then(a.profile.cmp(&b.profile)).then(a.stable_id.cmp(&b.stable_id))
    });
    let matching = rows.len();
    rows.truncate(q.limit);
    Ok(ClusterList { sort: q.sort, matching, total, clusters: rows })
}

/// One run of a test in one build.
#[derive(Debug, Clone, Serialize)]
pub struct TestRun {
    pub build_id: String,
    pub started: Option<i64>,
    /// `passed`, `failed` or `error` (skipped runs are not stored).
    pub status: String,
    pub url: String,
}

/// A test's runs in one job, newest first.
#[derive(Debug, Clone, Serialize)]
pub struct TestInJob {
    pub job: String,
    pub runs: usize,
    pub passed: usize,
    pub failed: usize,
    pub pass_rate: Option<f64>,
    /// At most [`MAX_JOB_BUILDS`], newest first.
    pub history: Vec<TestRun>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TestHistory {
    pub test: String,
    /// Jobs that ran the test, by name.
    pub jobs: Vec<TestInJob>,
}

/// A test's history across every job (matched on its name or kettle name); a test
/// no stored build ran is a 404.
pub fn test_history(store: &mut Store, name: &str) -> Result<TestHistory, WebError> {
    let mut jobs = Vec::new();
    for job in store.build_jobs()? {
        let builds = store.job_builds_with_tests_opts(&job, None, false)?;
        let mut t = TestInJob { job: job.clone(), runs: 0, passed: 0, failed: 0, pass_rate: None, history: Vec::new() };
        for b in builds.iter().rev() {
            for r in b.tests.iter().filter(|r| r.name == name || r.kettle_name.as_deref() == Some(name)) {
                t.runs += 1;
                if r.status == "passed" {
                    t.passed += 1;
                } else {
                    t.failed += 1;
                }
                if t.history.len() < MAX_JOB_BUILDS {
                    t.history.push(TestRun {
                        build_id: b.build_id.clone(),
                        started: b.started,
                        status: r.status.clone(),
                        url: spyglass_url(b),
                    });
                }
            }
        }
        if t.runs > 0 {
            t.pass_rate = Some(round3(t.passed as f64 / t.runs as f64));
            jobs.push(t);
        }
    }
    if jobs.is_empty() {
        return Err(WebError::NotFound(format!("no stored build ran a test named {name:?}")));
    }
    Ok(TestHistory { test: name.to_string(), jobs })
}
