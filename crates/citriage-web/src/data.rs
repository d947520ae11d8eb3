//! The data behind every page, shaped for both the JSON API and the HTML pages and
//! read from the in-memory [`WebIndex`]: the overview (latest snapshots, counts by
//! category and severity, drift since the previous snapshot, newest patterns), jobs
//! with their history, pass rates and flake signals, a test's history across jobs,
//! the clusters of the latest clustering run with filters and per-day counts, one
//! cluster in full, payload streams and the stored reports. Everything is ordered
//! deterministically.

use crate::error::WebError;
use crate::index::{by_name, BuildLite, ClusterIndex, ProfileIndex, WebIndex, TOP_NAMES};
use crate::search::{
    excerpt, JobCount, Occurrence, Place, SearchMatch, SearchQuery, SearchResult, Within, GATHER_LIMIT, SEARCH_DEADLINE,
};
use crate::summary::{outcome, Count, DayRate, JobSummary, NameCount, VerificationSummary};
use citriage_analysis::metrics::corrected::{JobFigures, Signal};
use citriage_model::number::round3;
use citriage_model::Day;
use citriage_patterns::normalize::Profile;
use citriage_store::ClusterFailure;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Instant;

/// Builds shown on a job page (newest first).
pub const MAX_JOB_BUILDS: usize = 200;
/// Most clusters one answer carries.
pub const MAX_CLUSTERS: usize = 1000;
/// Latest failures shown for a cluster.
pub const LATEST_FAILURES: usize = 20;
/// Jobs and tests listed for one cluster (the most failing first).
pub const DETAIL_NAMES: usize = 100;
/// Every job with stored builds, by name.
pub fn jobs(ix: &WebIndex) -> Vec<JobSummary> {
    ix.jobs.iter().map(|j| j.summary.clone()).collect()
}

#[derive(Debug, Clone, Serialize)]
pub struct BuildRow {
    pub build_id: String,
    pub outcome: String,
    /// The history strip's cell: the outcome, or `flake` for a pass with failed attempts.
    pub cell: String,
    pub result: Option<String>,
    pub started: Option<i64>,
    pub duration: Option<i64>,
    pub pr: Option<u64>,
    pub failed_tests: u32,
    pub url: String,
}

fn build_row(b: &BuildLite) -> BuildRow {
    BuildRow {
        build_id: b.build_id.clone(),
        outcome: outcome(b.result.as_deref()).to_string(),
        cell: b.cell().to_string(),
        result: b.result.clone(),
        started: b.started,
        duration: b.duration,
        pr: b.pr,
        failed_tests: b.failed_tests,
        url: b.url(),
    }
}

/// A test with a flake signal that fired, in a job.
#[derive(Debug, Clone, Serialize)]
pub struct FlakyTest {
    pub name: String,
    pub runs: u64,
    pub failed_runs: u64,
    pub flip_rate: f64,
    pub pfs: f64,
    /// The signals that fired.
    pub signals: Vec<Signal>,
    /// Build paths of failing runs, newest first (at most 5).
    pub failing_builds: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct JobDetail {
    pub summary: JobSummary,
    /// What the newest stored triage reports flag on this job.
    pub report_flags: Vec<crate::index::ReportFlag>,
    /// Newest first, at most [`MAX_JOB_BUILDS`].
    pub builds: Vec<BuildRow>,
    /// Oldest first, the last days that have finished builds.
    pub daily: Vec<DayRate>,
    /// The tests failing most often in the job's recent builds (most first, ties by name; at most 20).
    pub failing_tests: Vec<Count>,
    /// The window of the figures below, in days.
    pub window_days: i64,
    /// Corrected figures over the window (pass rate with its sample, streak, bias
    /// flags), without the per-test list; `None` without builds in the window.
    pub figures: Option<JobFigures>,
    /// Tests whose flake signals fired in the window, most failed runs first.
    pub flaky_tests: Vec<FlakyTest>,
}

/// One job's history; unknown jobs are a 404.
pub fn job(ix: &WebIndex, name: &str) -> Result<JobDetail, WebError> {
    let j = ix.job(name).ok_or_else(|| WebError::NotFound(format!("no stored builds of job {name:?}")))?;
    let builds = ix.builds[j.builds.clone()].iter().rev().take(MAX_JOB_BUILDS).map(build_row).collect();
    let mut flaky_tests = Vec::new();
    let figures = j.figures.clone().map(|mut f| {
        for t in std::mem::take(&mut f.tests) {
            if t.is_flaky() {
                flaky_tests.push(FlakyTest {
                    name: t.name,
                    runs: t.runs,
                    failed_runs: t.failed_runs,
                    flip_rate: t.flip_rate,
                    pfs: t.pfs,
                    signals: t.signals.into_iter().filter(|s| s.fired).collect(),
                    failing_builds: t.failing_builds,
                });
            }
        }
        f
    });
    Ok(JobDetail {
        report_flags: ix.job_flags.get(name.strip_prefix("pr:").unwrap_or(name)).cloned().unwrap_or_default(),
        summary: j.summary.clone(),
        builds,
        daily: j.daily.clone(),
        failing_tests: j.failing_tests.clone(),
        window_days: ix.settings.window_days,
        figures,
        flaky_tests,
    })
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

/// A test's runs in one job within the window.
#[derive(Debug, Clone, Serialize)]
pub struct TestInJob {
    pub job: String,
    /// The stored test name (differs from the asked name when it was a kettle name).
    pub test: String,
    pub runs: u32,
    pub passed: u32,
    pub failed: u32,
    pub pass_rate: Option<f64>,
    pub flip_rate: Option<f64>,
    pub pfs: Option<f64>,
    /// Every flake signal computed for the test in this job (empty when it never failed).
    pub signals: Vec<Signal>,
    /// Newest first, at most 200; empty when every run passed.
    pub history: Vec<TestRun>,
}

/// A cluster a test's failures belong to.
#[derive(Debug, Clone, Serialize)]
pub struct TestCluster {
    pub profile: String,
    pub stable_id: String,
    pub key: String,
    /// This test's failures in the cluster.
    pub failures: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct TestHistory {
    pub test: String,
    pub window_days: i64,
    /// Jobs that ran the test, by job name.
    pub jobs: Vec<TestInJob>,
    /// Clusters of the latest clustering runs holding its failures, most failures first.
    pub clusters: Vec<TestCluster>,
}

/// A test's history across every job (matched on its stored name or its kettle name);
/// a test no build in the window ran is a 404.
pub fn test_history(ix: &WebIndex, name: &str) -> Result<TestHistory, WebError> {
    let mut names: BTreeSet<&str> = BTreeSet::new();
    if ix.tests.contains(name) {
        names.insert(name);
    }
    names.extend(ix.tests.aliases_of(name));
    let mut jobs = Vec::new();
    for n in &names {
        for t in ix.tests.get(n).into_iter().flatten() {
            let figures = ix.test_figures(t);
            jobs.push(TestInJob {
                job: ix.job_name(t.job).to_string(),
                test: (*n).to_string(),
                runs: t.runs,
                passed: t.passed,
                failed: t.failed,
                pass_rate: (t.runs > 0).then(|| round3(f64::from(t.passed) / f64::from(t.runs))),
                flip_rate: figures.map(|f| f.flip_rate),
                pfs: figures.map(|f| f.pfs),
                signals: figures.map(|f| f.signals.clone()).unwrap_or_default(),
                history: t
                    .history
                    .iter()
                    .map(|&(pos, code)| {
                        let b = &ix.builds[pos as usize];
                        TestRun {
                            build_id: b.build_id.clone(),
                            started: b.started,
                            status: ["passed", "failed", "error"][usize::from(code.min(2))].to_string(),
                            url: b.url(),
                        }
                    })
                    .collect(),
            });
        }
    }
    if jobs.is_empty() {
        return Err(WebError::NotFound(format!(
            "no build in the last {} days ran a test named {name:?}",
            ix.settings.window_days
        )));
    }
    jobs.sort_by(|a, b| a.job.cmp(&b.job).then(a.test.cmp(&b.test)));
    let mut clusters = Vec::new();
    for (p, pi) in &ix.profiles {
        let tix: Vec<u32> = names
            .iter()
            .filter_map(|n| pi.tests.binary_search_by(|t| t.as_str().cmp(n)).ok())
            .map(|i| i as u32)
            .collect();
        if tix.is_empty() {
            continue;
        }
        for c in &pi.clusters {
            let failures: u64 = c.rows.iter().filter(|r| tix.contains(&r.test)).map(|r| u64::from(r.failures)).sum();
            if failures > 0 {
                clusters.push(TestCluster {
                    profile: p.clone(),
                    stable_id: c.stored.stable_id.clone(),
                    key: c.stored.key.clone(),
                    failures,
                });
            }
        }
    }
    clusters.sort_by(|a, b| {
        b.failures.cmp(&a.failures).then(a.profile.cmp(&b.profile)).then(a.stable_id.cmp(&b.stable_id))
    });
    Ok(TestHistory { test: name.to_string(), window_days: ix.settings.window_days, jobs, clusters })
}

/// How the cluster list is sorted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClusterSort {
    /// Most failures in the window first.
    Total,
    /// Most failures on the last day first.
    Today,
    /// Largest growth first: the last day's failures minus the mean of the six days before.
    Growth,
    /// Most recently seen first.
    LastSeen,
    /// Most recently appeared first.
    FirstSeen,
}

impl ClusterSort {
    pub fn as_str(self) -> &'static str {
        match self {
            ClusterSort::Total => "total",
            ClusterSort::Today => "today",
            ClusterSort::Growth => "growth",
            ClusterSort::LastSeen => "last_seen",
            ClusterSort::FirstSeen => "first_seen",
        }
    }
}

/// Which jobs' failures count: all, CI jobs (periodics and postsubmits) or PR jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    All,
    Ci,
    Pr,
}

/// The cluster list's filters, as given in the query string.
#[derive(Debug, Clone)]
pub struct ClusterQuery {
    /// `None`: the first stored profile (`default` when there is one).
    pub profile: Option<String>,
    /// Regexes on the failure text (the representative text or the normalized key).
    pub include: Option<regex::Regex>,
    pub exclude: Option<regex::Regex>,
    /// Regexes on job names (as the dashboards write them, `pr:` for presubmits) and test names:
    /// only matching jobs' and tests' failures count.
    pub job: Option<regex::Regex>,
    pub exclude_job: Option<regex::Regex>,
    pub test: Option<regex::Regex>,
    pub exclude_test: Option<regex::Regex>,
    pub kind: JobKind,
    /// Owner (SIG) of the cluster, exactly.
    pub owner: Option<String>,
    /// `known` (any known signature), `unknown` (none), or one signature id.
    pub signature: Option<String>,
    pub sort: ClusterSort,
    pub limit: usize,
    /// Matching clusters skipped before the ones shown (paging).
    pub offset: usize,
}

impl ClusterQuery {
    /// Reads `profile`, `include`, `exclude`, `job`, `exclude_job`, `test`,
    /// `exclude_test`, `kind` (`all`, `ci`, `pr`), `owner`, `signature`, `sort` and
    /// `limit`; empty values are ignored.
    pub fn parse(p: &BTreeMap<String, String>) -> Result<ClusterQuery, WebError> {
        let get = |k: &str| p.get(k).map(|v| v.trim()).filter(|v| !v.is_empty());
        let re = |k: &str| get(k).map(|v| crate::search::bounded_regex(k, v)).transpose();
        let profile = match get("profile") {
            None => None,
            Some(v) => match Profile::parse(v) {
                Some(p) => Some(p.name().to_string()),
                None => {
                    let names: Vec<&str> = Profile::ALL.iter().map(|p| p.name()).collect();
                    return Err(WebError::BadRequest(format!(
                        "unknown profile {v:?} (expected one of {})",
                        names.join(", ")
                    )));
                }
            },
        };
        let sort = match get("sort") {
            None | Some("total") | Some("size") => ClusterSort::Total,
            Some("today") => ClusterSort::Today,
            Some("growth") => ClusterSort::Growth,
            Some("last_seen") => ClusterSort::LastSeen,
            Some("first_seen") => ClusterSort::FirstSeen,
            Some(v) => {
                return Err(WebError::BadRequest(format!(
                    "unknown sort {v:?} (expected total, today, growth, last_seen or first_seen)"
                )))
            }
        };
        let kind = match get("kind") {
            None | Some("all") => JobKind::All,
            Some("ci") => JobKind::Ci,
            Some("pr") => JobKind::Pr,
            Some(v) => return Err(WebError::BadRequest(format!("unknown kind {v:?} (expected all, ci or pr)"))),
        };
        let limit = match get("limit") {
            None => 50,
            Some(v) => match v.parse::<usize>() {
                Ok(n) if (1..=MAX_CLUSTERS).contains(&n) => n,
                _ => return Err(WebError::BadRequest(format!("limit must be 1 to {MAX_CLUSTERS}, not {v:?}"))),
            },
        };
        let offset = match get("offset") {
            None => 0,
            Some(v) => v
                .parse::<usize>()
                .map_err(|_| WebError::BadRequest(format!("offset must be a number of clusters, not {v:?}")))?,
        };
        Ok(ClusterQuery {
            profile,
            include: re("include")?,
            exclude: re("exclude")?,
            job: re("job")?,
            exclude_job: re("exclude_job")?,
            test: re("test")?,
            exclude_test: re("exclude_test")?,
            kind,
            owner: get("owner").map(str::to_string),
            signature: get("signature").map(str::to_string),
            sort,
            limit,
            offset,
        })
    }

    fn filters_rows(&self) -> bool {
        self.job.is_some()
            || self.exclude_job.is_some()
            || self.test.is_some()
            || self.exclude_test.is_some()
            || self.kind != JobKind::All
    }
}

/// A cluster as the list shows it (counts after the job, test and kind filters).
#[derive(Debug, Clone, Serialize)]
pub struct ClusterRow {
    pub profile: String,
    pub stable_id: String,
    pub k8s_id: String,
    /// The normalized failure text.
    pub key: String,
    /// A representative failure text and k8s triage's `commonSpans` over it
    /// (alternating shared and differing byte lengths, starting with a shared one).
    pub text: String,
    pub spans: Vec<usize>,
    pub owner: String,
    /// Known failure signatures the text matches.
    pub signatures: Vec<String>,
    /// Failures in the window.
    pub total: u64,
    /// Failures on the window's last day.
    pub today: u64,
    /// `today` minus the mean per day of the six days before it.
    pub growth: f64,
    /// Failures per day of the window, oldest first.
    pub per_day: Vec<u32>,
    pub first_seen: i64,
    pub last_seen: i64,
    /// Distinct jobs and tests with failures.
    pub jobs: usize,
    pub tests: usize,
    /// The jobs and tests with the most failures (at most three each).
    pub top_jobs: Vec<NameCount>,
    pub top_tests: Vec<NameCount>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ClusterList {
    /// The profile shown, `None` when no clustering run is stored.
    pub profile: Option<String>,
    /// Profiles with a stored run.
    pub profiles: Vec<String>,
    pub sort: ClusterSort,
    /// Matching clusters skipped before `clusters`.
    pub offset: usize,
    /// The run's window: first and last day.
    pub first_day: Option<Day>,
    pub last_day: Option<Day>,
    /// Clusters matching the filters.
    pub matching: usize,
    /// Clusters in the run.
    pub total: usize,
    /// Failures of the matching clusters (after the job, test and kind filters).
    pub failures: u64,
    pub clusters: Vec<ClusterRow>,
    /// Choices for the owner and signature filters.
    pub owners: Vec<String>,
    pub signatures: Vec<String>,
}

/// The profile a query names, or the first stored one.
fn pick_profile<'a>(
    ix: &'a WebIndex,
    wanted: Option<&str>,
) -> Result<Option<(&'a String, &'a ProfileIndex)>, WebError> {
    match wanted {
        Some(p) => match ix.profiles.get_key_value(p) {
            Some(x) => Ok(Some(x)),
            None => Err(WebError::NotFound(format!("no clustering run of profile {p:?} is stored"))),
        },
        None => Ok(ix.default_profile()),
    }
}

/// Which rows of a profile count under a query's job, test and kind filters.
struct RowFilter {
    job_ok: Vec<bool>,
    test_ok: Vec<bool>,
}

impl RowFilter {
    fn new(p: &ProfileIndex, q: &ClusterQuery) -> RowFilter {
        let job_ok = p
            .jobs
            .iter()
            .map(|j| {
                let pr = j.starts_with("pr:");
                (match q.kind {
                    JobKind::All => true,
                    JobKind::Ci => !pr,
                    JobKind::Pr => pr,
                }) && q.job.as_ref().is_none_or(|r| r.is_match(j))
                    && q.exclude_job.as_ref().is_none_or(|r| !r.is_match(j))
            })
            .collect();
        let test_ok = p
            .tests
            .iter()
            .map(|t| {
                q.test.as_ref().is_none_or(|r| r.is_match(t)) && q.exclude_test.as_ref().is_none_or(|r| !r.is_match(t))
            })
            .collect();
        RowFilter { job_ok, test_ok }
    }

    fn keeps(&self, r: &crate::index::DailyRow) -> bool {
        self.job_ok[r.job as usize] && self.test_ok[r.test as usize]
    }
}

fn growth(per_day: &[u32]) -> f64 {
    let Some((&today, before)) = per_day.split_last() else { return 0.0 };
    let prev: Vec<u32> = before.iter().rev().take(6).copied().collect();
    let mean = if prev.is_empty() { 0.0 } else { prev.iter().map(|&x| f64::from(x)).sum::<f64>() / prev.len() as f64 };
    ((f64::from(today) - mean) * 10.0).round() / 10.0
}

fn cluster_row(
    profile: &str,
    p: &ProfileIndex,
    c: &ClusterIndex,
    f: Option<&RowFilter>,
    top: usize,
) -> Option<ClusterRow> {
    let (total, per_day, (jobs, top_jobs), (tests, top_tests)) = match f {
        // Unfiltered: figures computed when the view was built.
        None if top <= TOP_NAMES => (
            c.total,
            c.per_day.clone(),
            (c.jobs, c.top_jobs.iter().take(top).cloned().collect()),
            (c.tests, c.top_tests.iter().take(top).cloned().collect()),
        ),
        _ => {
            let kept = c.rows.iter().filter(|r| f.is_none_or(|f| f.keeps(r)));
            let mut per_day = vec![0u32; p.days];
            for r in kept.clone() {
                per_day[r.day as usize] += r.failures;
            }
            let total = per_day.iter().map(|&x| u64::from(x)).sum::<u64>();
            if total == 0 {
                return None;
            }
            (
                total,
                per_day,
                by_name(kept.clone(), &p.jobs, |r| r.job, p.days, top),
                by_name(kept, &p.tests, |r| r.test, p.days, top),
            )
        }
    };
    let s = &c.stored;
    Some(ClusterRow {
        profile: profile.to_string(),
        stable_id: s.stable_id.clone(),
        k8s_id: s.k8s_id.clone(),
        key: s.key.clone(),
        text: s.text.clone(),
        spans: s.spans.clone(),
        owner: s.owner.clone(),
        signatures: s.signatures.clone(),
        total,
        today: u64::from(per_day.last().copied().unwrap_or(0)),
        growth: growth(&per_day),
        per_day,
        first_seen: s.first_seen,
        last_seen: s.last_seen,
        jobs,
        tests,
        top_jobs,
        top_tests,
    })
}

/// The clusters of the latest run, filtered and sorted (ties by stable id).
pub fn clusters(ix: &WebIndex, q: &ClusterQuery) -> Result<ClusterList, WebError> {
    let profiles: Vec<String> = ix.profiles.keys().cloned().collect();
    let Some((name, p)) = pick_profile(ix, q.profile.as_deref())? else {
        return Ok(ClusterList {
            profile: None,
            profiles,
            sort: q.sort,
            offset: q.offset,
            first_day: None,
            last_day: None,
            matching: 0,
            total: 0,
            failures: 0,
            clusters: Vec::new(),
            owners: Vec::new(),
            signatures: Vec::new(),
        });
    };
    let filter = q.filters_rows().then(|| RowFilter::new(p, q));
    let text_ok = |c: &ClusterIndex| {
        let s = &c.stored;
        q.include.as_ref().is_none_or(|r| r.is_match(&s.text) || r.is_match(&s.key))
            && q.exclude.as_ref().is_none_or(|r| !r.is_match(&s.text) && !r.is_match(&s.key))
            && q.owner.as_ref().is_none_or(|o| &s.owner == o)
            && match q.signature.as_deref() {
                None => true,
                Some("known") => !s.signatures.is_empty(),
                Some("unknown") => s.signatures.is_empty(),
                Some(id) => s.signatures.iter().any(|x| x == id),
            }
    };
    // Sort keys first (cheap), rows in full only for the clusters shown.
    let mut keyed: Vec<(&ClusterIndex, u64, u64, f64)> = Vec::new();
    for c in p.clusters.iter().filter(|c| text_ok(c)) {
        let (total, today, g) = match &filter {
            None => (c.total, u64::from(c.per_day.last().copied().unwrap_or(0)), growth(&c.per_day)),
            Some(f) => {
                let mut per_day = vec![0u32; p.days];
                for r in c.rows.iter().filter(|r| f.keeps(r)) {
                    per_day[r.day as usize] += r.failures;
                }
                let total: u64 = per_day.iter().map(|&x| u64::from(x)).sum();
                if total == 0 {
                    continue;
                }
                (total, u64::from(per_day.last().copied().unwrap_or(0)), growth(&per_day))
            }
        };
        keyed.push((c, total, today, g));
    }
    keyed.sort_by(|a, b| {
        let primary = match q.sort {
            ClusterSort::Total => b.1.cmp(&a.1),
            ClusterSort::Today => b.2.cmp(&a.2),
            ClusterSort::Growth => b.3.total_cmp(&a.3),
            ClusterSort::LastSeen => b.0.stored.last_seen.cmp(&a.0.stored.last_seen),
            ClusterSort::FirstSeen => b.0.stored.first_seen.cmp(&a.0.stored.first_seen),
        };
        primary.then(b.1.cmp(&a.1)).then(a.0.stored.stable_id.cmp(&b.0.stored.stable_id))
    });
    let matching = keyed.len();
    let failures = keyed.iter().map(|k| k.1).sum();
    let rows = keyed
        .iter()
        .skip(q.offset)
        .take(q.limit)
        .filter_map(|(c, ..)| cluster_row(name, p, c, filter.as_ref(), 3))
        .collect();
    Ok(ClusterList {
        profile: Some(name.clone()),
        profiles,
        sort: q.sort,
        offset: q.offset,
        first_day: Some(p.first_day),
        last_day: Some(p.last_day()),
        matching,
        total: p.clusters.len(),
        failures,
        clusters: rows,
        owners: p.owners.clone(),
        signatures: p.signatures.clone(),
    })
}

/// A recent failure of a cluster.
#[derive(Debug, Clone, Serialize)]
pub struct RecentFailure {
    pub job: String,
    pub build_id: String,
    pub started: Option<i64>,
    pub pr: Option<u64>,
    pub test: String,
    /// The start of the failure text.
    pub text: String,
    pub url: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ClusterDetail {
    pub cluster: ClusterRow,
    pub first_day: Day,
    pub last_day: Day,
    /// Jobs and tests with failures (how many in all), most first, at most [`DETAIL_NAMES`] each.
    pub jobs_total: usize,
    pub jobs: Vec<NameCount>,
    pub tests_total: usize,
    pub tests: Vec<NameCount>,
    /// Newest first, at most [`LATEST_FAILURES`].
    pub latest: Vec<RecentFailure>,
    /// Sub-patterns by template, job family and signature, each with one failure as evidence.
    pub sub_patterns: Vec<citriage_store::StoredSubPattern>,
    /// The last 7 days of the run's window against the 7 days before.
    pub drift: Option<DriftRow>,
}

/// Characters of failure text kept with a recent failure.
const RECENT_TEXT: usize = 600;

/// One cluster of a profile's latest run in full; the latest failures are read from the store.
pub fn cluster_detail(
    ix: &WebIndex,
    profile: &str,
    stable_id: &str,
    latest: impl FnOnce() -> Result<(Vec<ClusterFailure>, Vec<citriage_store::StoredSubPattern>), WebError>,
) -> Result<ClusterDetail, WebError> {
    let p = ix
        .profiles
        .get(profile)
        .ok_or_else(|| WebError::NotFound(format!("no clustering run of profile {profile:?} is stored")))?;
    let c = p
        .cluster(stable_id)
        .ok_or_else(|| WebError::NotFound(format!("no cluster {stable_id:?} in the latest {profile} run")))?;
    let cluster = cluster_row(profile, p, c, None, 3).ok_or_else(|| WebError::Internal("empty cluster".into()))?;
    let (jobs_total, jobs) = by_name(c.rows.iter(), &p.jobs, |r| r.job, p.days, DETAIL_NAMES);
    let (tests_total, tests) = by_name(c.rows.iter(), &p.tests, |r| r.test, p.days, DETAIL_NAMES);
    let (latest, sub_patterns) = latest()?;
    let to = p.last_day();
    let drift = drift_rows(p, to.plus(-7), to, &DriftConfig::default(), Some(stable_id)).into_iter().next();
    let latest = latest
        .into_iter()
        .map(|f| RecentFailure {
            url: citriage_model::build::prow_url(&f.bucket, &f.path),
            job: if f.kind == "presubmit" || f.kind == "batch" { format!("pr:{}", f.job) } else { f.job },
            build_id: f.build_id,
            started: f.started,
            pr: f.pr,
            test: f.test,
            text: f.failure_text.map(|t| t.chars().take(RECENT_TEXT).collect()).unwrap_or_default(),
        })
        .collect();
    Ok(ClusterDetail {
        cluster,
        first_day: p.first_day,
        last_day: p.last_day(),
        jobs_total,
        jobs,
        tests_total,
        tests,
        latest,
        sub_patterns,
        drift,
    })
}

use citriage_analysis::pattern_drift::{pattern_drift, DriftConfig, DriftKind};

/// One pattern's drift between two dates.
#[derive(Debug, Clone, Serialize)]
pub struct DriftRow {
    pub stable_id: String,
    pub profile: String,
    pub kind: DriftKind,
    pub before: u64,
    pub after: u64,
    /// Failures per day from the first window's first day to the second date.
    pub first_day: Day,
    pub per_day: Vec<u32>,
    /// First line of the representative failure text.
    pub text: String,
}

/// Pattern drift of a profile's latest run between two dates.
#[derive(Debug, Clone, Serialize)]
pub struct DriftList {
    pub profile: String,
    pub from: Day,
    pub to: Day,
    pub span_days: i64,
    /// New, growing, shrinking and gone patterns (steady ones only with `all=1`).
    pub patterns: Vec<DriftRow>,
    pub steady: usize,
}

fn drift_rows(p: &ProfileIndex, from: Day, to: Day, cfg: &DriftConfig, only: Option<&str>) -> Vec<DriftRow> {
    let mut daily: Vec<(String, i64, u64)> = Vec::new();
    for c in &p.clusters {
        if only.is_some_and(|id| id != c.stored.stable_id) {
            continue;
        }
        for r in &c.rows {
            daily.push((c.stored.stable_id.clone(), p.first_day.0 + r.day as i64, r.failures as u64));
        }
    }
    pattern_drift(&daily, from.0, to.0, cfg)
        .into_iter()
        .map(|d| {
            let text = p
                .cluster(&d.id)
                .map(|c| c.stored.text.lines().next().unwrap_or("").chars().take(200).collect())
                .unwrap_or_default();
            DriftRow {
                profile: p.run.profile.clone(),
                stable_id: d.id,
                kind: d.kind,
                before: d.before,
                after: d.after,
                first_day: Day(d.per_day.first().map_or(from.0, |x| x.0)),
                per_day: d.per_day.iter().map(|x| x.1.min(u32::MAX as u64) as u32).collect(),
                text,
            }
        })
        .collect()
}

/// Pattern drift: `profile`, `from` and `to` (YYYY-MM-DD; default: the run's last day and
/// 7 days before), `span` (days per window, default 7, at most 90), `all` (1: steady
/// patterns too).
pub fn drift(ix: &WebIndex, q: &BTreeMap<String, String>) -> Result<DriftList, WebError> {
    let get = |k: &str| q.get(k).map(|v| v.trim()).filter(|v| !v.is_empty());
    let Some((name, p)) = pick_profile(ix, get("profile"))? else {
        return Err(WebError::NotFound("no clustering run is stored: run `citriage cluster` first".into()));
    };
    let day = |k: &str| -> Result<Option<Day>, WebError> {
        get(k)
            .map(|v| Day::parse(v).ok_or_else(|| WebError::BadRequest(format!("{k}={v:?}: expected YYYY-MM-DD"))))
            .transpose()
    };
    let span = match get("span") {
        None => 7,
        Some(v) => match v.parse::<i64>() {
            Ok(n) if (1..=90).contains(&n) => n,
            _ => return Err(WebError::BadRequest(format!("span={v:?}: expected 1 to 90 days"))),
        },
    };
    let to = day("to")?.unwrap_or_else(|| p.last_day());
    let from = day("from")?.unwrap_or(to.plus(-span));
    if (to.0 - from.0).abs() > 366 {
        return Err(WebError::BadRequest("from and to are more than a year apart".into()));
    }
    let cfg = DriftConfig { span, ..DriftConfig::default() };
    let all = get("all") == Some("1");
    let rows = drift_rows(p, from, to, &cfg, None);
    let steady = rows.iter().filter(|r| r.kind == DriftKind::Steady).count();
    let patterns = rows.into_iter().filter(|r| all || r.kind != DriftKind::Steady).collect();
    Ok(DriftList { profile: name.clone(), from: from.min(to), to: to.max(from), span_days: span, patterns, steady })
}

/// Payloads of one release stream.
#[derive(Debug, Clone, Serialize)]
pub struct PayloadStream {
    pub stream: String,
    /// Newest first.
    pub payloads: Vec<crate::index::PayloadRow>,
    pub accepted: usize,
    pub rejected: usize,
    /// Payloads created per day (oldest first) by phase: accepted, rejected, other.
    pub per_day: Vec<PhaseDay>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PhaseDay {
    pub day: Day,
    pub accepted: usize,
    pub rejected: usize,
    pub other: usize,
}

/// The stored payload streams, by stream name.
pub fn payloads(ix: &WebIndex) -> Vec<PayloadStream> {
    let mut by_stream: BTreeMap<&str, Vec<&crate::index::PayloadRow>> = BTreeMap::new();
    for p in &ix.payloads {
        by_stream.entry(p.stream.as_str()).or_default().push(p);
    }
    by_stream
        .into_iter()
        .map(|(stream, rows)| {
            let mut days: BTreeMap<Day, PhaseDay> = BTreeMap::new();
            for r in &rows {
                let Some(day) = r.created.as_deref().and_then(|c| Day::parse(c.get(..10).unwrap_or(""))) else {
                    continue;
                };
                let e = days.entry(day).or_insert(PhaseDay { day, accepted: 0, rejected: 0, other: 0 });
                match r.phase.as_str() {
                    "Accepted" => e.accepted += 1,
                    "Rejected" | "Failed" => e.rejected += 1,
                    _ => e.other += 1,
                }
            }
            PayloadStream {
                stream: stream.to_string(),
                accepted: rows.iter().filter(|r| r.phase == "Accepted").count(),
                rejected: rows.iter().filter(|r| matches!(r.phase.as_str(), "Rejected" | "Failed")).count(),
                payloads: rows.into_iter().cloned().collect(),
                per_day: days.into_values().collect(),
            }
        })
        .collect()
}

/// A stored document as the reports page lists it.
#[derive(Debug, Clone, Serialize)]
pub struct ReportEntry {
    pub kind: String,
    pub key: String,
    pub title: String,
    pub as_of: String,
    /// The media types stored under this kind and key.
    pub media_types: Vec<String>,
    pub bytes: u64,
    /// The verifier's verdict on this document, when a result is stored
    /// (`pass`, `fail`, `incomplete`), with its counts.
    pub verification: Option<VerificationSummary>,
}

/// Every stored document by kind, then newest first, each with the verifier's result
/// on it when one is stored; verifier results about stored documents are shown with
/// them, not on their own.
pub fn reports(ix: &WebIndex) -> Vec<ReportEntry> {
    let stored: BTreeSet<String> = ix.documents.iter().map(|d| format!("{}/{}", d.kind, d.key)).collect();
    let mut out: Vec<ReportEntry> = Vec::new();
    for d in &ix.documents {
        if d.kind == "verify" && stored.contains(&d.key) {
            continue;
        }
        if let Some(last) = out.last_mut().filter(|e| e.kind == d.kind && e.key == d.key) {
            last.media_types.push(d.media_type.clone());
            last.bytes += d.bytes;
            continue;
        }
        out.push(ReportEntry {
            kind: d.kind.clone(),
            key: d.key.clone(),
            title: d.title.clone(),
            as_of: d.as_of.clone(),
            media_types: vec![d.media_type.clone()],
            bytes: d.bytes,
            verification: ix.verifications.get(&format!("{}/{}", d.kind, d.key)).cloned(),
        });
    }
    out
}

/// Runs a failure-text search over the view: the regex over the distinct texts of
/// [`SearchIndex`](crate::search::SearchIndex), matches expanded to their occurrences,
/// filtered by job, age and kind, newest build first.
pub fn search(ix: &WebIndex, q: &SearchQuery) -> SearchResult {
    let deadline = Instant::now() + SEARCH_DEADLINE;
    let si = &ix.search;
    let since = match (q.max_age_days, citriage_model::time::robust_newest(ix.builds.iter().filter_map(|b| b.started)))
    {
        (Some(days), Some(newest)) => Some(newest - i64::from(days) * citriage_model::time::DAY),
        _ => None,
    };
    let mut job_ok: HashMap<u32, bool> = HashMap::new();
    let mut out = SearchResult {
        pattern: q.pattern.as_str().to_string(),
        matches: Vec::new(),
        groups: None,
        indexed: si.entries,
        scanned: 0,
        used_index: false,
        found: 0,
        truncated: false,
        timed_out: false,
    };
    // (text, occurrence, match range)
    let mut hits: Vec<(usize, Occurrence, usize, usize)> = Vec::new();
    let budget = citriage_search::SearchBudget::unlimited().with_deadline(deadline);
    let stats = si.texts.search(&q.pattern, budget, |id, _text, m| {
        let t = id.index();
        for o in si.occurrences_of(t) {
            let wanted = match o.place {
                Place::Test { .. } => q.within != Within::Logs,
                Place::Excerpt { .. } => q.within != Within::Tests,
            };
            if !wanted {
                continue;
            }
            let b = &ix.builds[o.build as usize];
            if since.is_some_and(|s| b.started.is_none_or(|t| t < s)) {
                continue;
            }
            let ok = *job_ok.entry(b.job).or_insert_with(|| {
                let j = ix.job_name(b.job);
                q.job.as_ref().is_none_or(|r| r.is_match(j)) && q.exclude_job.as_ref().is_none_or(|r| !r.is_match(j))
            });
            if !ok {
                continue;
            }
            if hits.len() >= GATHER_LIMIT {
                out.truncated = true;
                return std::ops::ControlFlow::Break(());
            }
            hits.push((t, *o, m.start(), m.end()));
        }
        std::ops::ControlFlow::Continue(())
    });
    out.scanned = stats.verified;
    out.used_index = stats.used_index;
    out.timed_out = stats.stopped_early && !out.truncated;
    out.found = hits.len();
    // Newest build first; ties by job, build, then place.
    let key = |o: &Occurrence| {
        let b = &ix.builds[o.build as usize];
        (
            std::cmp::Reverse(b.started),
            b.job,
            b.build_id.as_str(),
            match o.place {
                Place::Test { name } => (0, name, 0),
                Place::Excerpt { source, line_start } => (1, source, line_start),
            },
        )
    };
    hits.sort_by(|a, b| key(&a.1).cmp(&key(&b.1)).then(a.0.cmp(&b.0)));
    if q.group_by_job {
        let mut groups: BTreeMap<&str, usize> = BTreeMap::new();
        for h in &hits {
            *groups.entry(ix.job_name(ix.builds[h.1.build as usize].job)).or_insert(0) += 1;
        }
        out.groups =
            Some(groups.into_iter().map(|(job, matches)| JobCount { job: job.to_string(), matches }).collect());
    }
    if hits.len() > q.max_matches {
        out.truncated = true;
    }
    let mut texts = si.texts.reader();
    for (t, o, s, e) in hits.into_iter().take(q.max_matches) {
        let b = &ix.builds[o.build as usize];
        let full = texts.get(citriage_search::TextId::from_u32(t as u32)).unwrap_or("");
        let (text, ms, me, line) = excerpt(full, s, e, q.context);
        let (kind, name, line) = match o.place {
            Place::Test { name } => ("test", si.names[name as usize].clone(), None),
            Place::Excerpt { source, line_start } => {
                ("log", si.names[source as usize].clone(), Some(line_start + line as u32))
            }
        };
        out.matches.push(SearchMatch {
            job: ix.job_name(b.job).to_string(),
            build_id: b.build_id.clone(),
            started: b.started,
            kind,
            name,
            line,
            excerpt: text,
            match_start: ms,
            match_end: me,
            url: b.url(),
        });
    }
    out
}

/// How a list's names are filtered: a case-insensitive substring (`q`), a regex
/// (`re`), or both.
#[derive(Debug, Clone, Default)]
pub struct NameFilter {
    pub q: String,
    pub re: Option<regex::Regex>,
}

impl NameFilter {
    /// Reads `q` and `re` (a bad regex is a 400 naming it).
    pub fn parse(p: &BTreeMap<String, String>) -> Result<NameFilter, WebError> {
        let q = p.get("q").map(|s| s.trim().to_lowercase()).unwrap_or_default();
        let re = match p.get("re").map(|s| s.trim()).filter(|s| !s.is_empty()) {
            Some(r) => Some(crate::search::bounded_regex("re (regex)", r)?),
            None => None,
        };
        Ok(NameFilter { q, re })
    }

    pub fn matches(&self, name: &str) -> bool {
        (self.q.is_empty() || name.to_lowercase().contains(&self.q))
            && self.re.as_ref().is_none_or(|r| r.is_match(name))
    }

    pub fn is_empty(&self) -> bool {
        self.q.is_empty() && self.re.is_none()
    }
}

/// A group of jobs on `/jobs`.
#[derive(Debug, Clone, Serialize)]
pub struct JobGroup {
    /// The category (the triage's rules), the kind of job, or "all jobs".
    pub name: String,
    pub tags: Vec<String>,
    /// Jobs whose newest finished build failed or errored.
    pub failing: usize,
    pub jobs: Vec<JobSummary>,
}

/// `/jobs`: filtered, sorted and grouped.
#[derive(Debug, Clone, Serialize)]
pub struct JobsList {
    pub sort: String,
    pub group: String,
    pub total: usize,
    pub matching: usize,
    pub groups: Vec<JobGroup>,
    /// Without stored builds: the jobs of the stored snapshots by category, as
    /// (dataset, job), and how many entries the snapshots list.
    #[serde(skip)]
    pub snapshot_groups: Vec<SnapshotGroup>,
    pub snapshot_total: usize,
}

/// Snapshot entries of one category (`/jobs` of a store without builds).
#[derive(Debug, Clone)]
pub struct SnapshotGroup {
    pub name: String,
    pub jobs: Vec<(String, crate::summary::SnapshotJob)>,
}

/// The sorts of `/jobs`, the default first.
pub const JOB_SORTS: &[(&str, &str)] = &[
    ("failing", "most failing first"),
    ("newest_failure", "newest failure first"),
    ("pass_rate", "lowest pass rate first"),
    ("name", "name"),
    ("builds", "most builds"),
];

/// The groupings of `/jobs`, the default first.
pub const JOB_GROUPS: &[(&str, &str)] = &[
    ("dashboard", "TestGrid dashboard (release-blocking first)"),
    ("category", "category (triage rules)"),
    ("kind", "CI / PR / post-submit"),
    ("none", "no grouping"),
];

/// The group of jobs no build places on a TestGrid dashboard.
pub const NO_DASHBOARD: &str = "no TestGrid dashboard known";

fn job_kind(name: &str) -> &'static str {
    if name.starts_with("pr:") || name.starts_with("pull-") {
        "PR jobs (presubmits)"
    } else if name.starts_with("post-") {
        "post-submit jobs"
    } else {
        "CI jobs (periodics)"
    }
}

/// Whether a job's newest finished build (a running or aborted one does not count)
/// failed or errored.
pub fn failing_now_in(ix: &WebIndex, job: &str) -> bool {
    ix.job(job)
        .and_then(|j| {
            ix.builds[j.builds.clone()]
                .iter()
                .rev()
                .map(|b| outcome(b.result.as_deref()))
                .find(|o| matches!(*o, "pass" | "fail" | "error"))
        })
        .is_some_and(|o| o != "pass")
}

/// `/jobs?q=&re=&sort=&group=`.
pub fn jobs_list(ix: &WebIndex, p: &BTreeMap<String, String>) -> Result<JobsList, WebError> {
    let f = NameFilter::parse(p)?;
    let pick = |key: &str, options: &[(&str, &str)]| -> Result<String, WebError> {
        match p.get(key).map(String::as_str).filter(|s| !s.is_empty()) {
            None => Ok(options[0].0.to_string()),
            Some(v) if options.iter().any(|(o, _)| *o == v) => Ok(v.to_string()),
            Some(v) => Err(WebError::BadRequest(format!(
                "{key}={v:?}: expected one of {}",
                options.iter().map(|(o, _)| *o).collect::<Vec<_>>().join(", ")
            ))),
        }
    };
    let sort = pick("sort", JOB_SORTS)?;
    // By TestGrid dashboard when builds name any, else by category.
    let any_dashboard = ix.jobs.iter().any(|j| !j.summary.dashboards.is_empty());
    let group = match pick("group", JOB_GROUPS)? {
        g if g == "dashboard" && !any_dashboard && p.get("group").is_none_or(|v| v.is_empty()) => {
            "category".to_string()
        }
        g => g,
    };
    let mut jobs: Vec<JobSummary> = ix.jobs.iter().map(|j| j.summary.clone()).filter(|j| f.matches(&j.job)).collect();
    let newest_failure = |j: &JobSummary| -> i64 {
        ix.job(&j.job)
            .and_then(|ji| ix.builds[ji.builds.clone()].iter().rev().find(|b| matches!(b.cell(), "fail" | "error")))
            .and_then(|b| b.started)
            .unwrap_or(i64::MIN)
    };
    match sort.as_str() {
        "failing" => jobs.sort_by(|a, b| {
            failing_now_in(ix, &b.job)
                .cmp(&failing_now_in(ix, &a.job))
                .then((b.failed + b.errored).cmp(&(a.failed + a.errored)))
                .then(a.job.cmp(&b.job))
        }),
        "newest_failure" => {
            let mut keyed: Vec<(i64, JobSummary)> = jobs.into_iter().map(|j| (newest_failure(&j), j)).collect();
            keyed.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.job.cmp(&b.1.job)));
            jobs = keyed.into_iter().map(|(_, j)| j).collect();
        }
        "pass_rate" => jobs
            .sort_by(|a, b| a.pass_rate.unwrap_or(2.0).total_cmp(&b.pass_rate.unwrap_or(2.0)).then(a.job.cmp(&b.job))),
        "builds" => jobs.sort_by(|a, b| b.builds.cmp(&a.builds).then(a.job.cmp(&b.job))),
        _ => jobs.sort_by(|a, b| a.job.cmp(&b.job)),
    }
    let matching = jobs.len();
    let rules = citriage_analysis::RuleSet::builtin();
    let mut groups: Vec<JobGroup> = Vec::new();
    for j in jobs {
        let (name, tags) = match group.as_str() {
            "category" => {
                let c = rules.categorize(&j.job).to_string();
                let tags = rules.tags_of(&c).into_iter().collect();
                (c, tags)
            }
            "kind" => (job_kind(&j.job).to_string(), Vec::new()),
            // The first dashboard the annotation names: where the job's owners put it first.
            "dashboard" => match j.dashboards.first() {
                Some(d) => {
                    let blocking = d.starts_with("sig-release-") && d.ends_with("-blocking");
                    (d.clone(), if blocking { vec!["release-blocking".to_string()] } else { Vec::new() })
                }
                None => (NO_DASHBOARD.to_string(), Vec::new()),
            },
            _ => ("all jobs".to_string(), Vec::new()),
        };
        let g = match groups.iter_mut().position(|g| g.name == name) {
            Some(i) => &mut groups[i],
            None => {
                groups.push(JobGroup { name, tags, failing: 0, jobs: Vec::new() });
                groups.last_mut().expect("just pushed")
            }
        };
        g.failing += usize::from(failing_now_in(ix, &j.job));
        g.jobs.push(j);
    }
    // Groups with jobs failing now first (most first), then by name; release-blocking
    // groups, when the rules tag any, before all.
    // The jobs of no known dashboard last.
    groups.sort_by(|a, b| {
        let blocking = |g: &JobGroup| g.tags.iter().any(|t| t.contains("blocking"));
        blocking(b)
            .cmp(&blocking(a))
            .then((a.name == NO_DASHBOARD).cmp(&(b.name == NO_DASHBOARD)))
            .then(b.failing.cmp(&a.failing))
            .then(a.name.cmp(&b.name))
    });
    let mut snapshot_groups: Vec<SnapshotGroup> = Vec::new();
    let mut snapshot_total = 0;
    let mut matching = matching;
    if ix.jobs.is_empty() {
        for s in &ix.overview.snapshots {
            snapshot_total += s.job_list.len();
            for j in s.job_list.iter().filter(|j| f.matches(&j.job)) {
                matching += 1;
                let entry = (s.dataset.as_str().to_string(), j.clone());
                match snapshot_groups.iter_mut().find(|g| g.name == j.category) {
                    Some(g) => g.jobs.push(entry),
                    None => snapshot_groups.push(SnapshotGroup { name: j.category.clone(), jobs: vec![entry] }),
                }
            }
        }
        snapshot_groups.sort_by(|a, b| b.jobs.len().cmp(&a.jobs.len()).then(a.name.cmp(&b.name)));
        for g in &mut snapshot_groups {
            g.jobs.sort_by(|a, b| a.1.job.cmp(&b.1.job).then(a.0.cmp(&b.0)));
        }
    }
    Ok(JobsList { sort, group, total: ix.jobs.len(), matching, groups, snapshot_groups, snapshot_total })
}

/// One test on `/tests`' list.
#[derive(Debug, Clone, Serialize)]
pub struct TestRow {
    pub name: String,
    pub jobs: usize,
    pub runs: u32,
    pub failed: u32,
    /// Jobs in which a flake signal fired for it.
    pub flaky_in: usize,
}

/// `/tests` without an exact name: tests matching `q` (substring) or `re` (regex),
/// sorted by `sort` (`failing`, the default; `flaky`; `name`), at most `limit`.
#[derive(Debug, Clone, Serialize)]
pub struct TestList {
    pub sort: String,
    pub matching: usize,
    pub total: usize,
    pub tests: Vec<TestRow>,
}

pub const TEST_SORTS: &[(&str, &str)] =
    &[("failing", "most failures first"), ("flaky", "most flaky first"), ("name", "name")];

pub fn test_list(ix: &WebIndex, p: &BTreeMap<String, String>, limit: usize) -> Result<TestList, WebError> {
    let f = NameFilter::parse(p)?;
    let sort = match p.get("sort").map(String::as_str).filter(|s| !s.is_empty()) {
        None => "failing".to_string(),
        Some(v) if TEST_SORTS.iter().any(|(o, _)| *o == v) => v.to_string(),
        Some(v) => return Err(WebError::BadRequest(format!("sort={v:?}: expected failing, flaky or name"))),
    };
    let mut rows: Vec<TestRow> = ix
        .tests
        .iter()
        .filter(|(n, _)| f.matches(n))
        .map(|(n, per_job)| TestRow {
            name: n.to_string(),
            jobs: per_job.len(),
            runs: per_job.iter().map(|t| t.runs).sum(),
            failed: per_job.iter().map(|t| t.failed).sum(),
            flaky_in: per_job
                .iter()
                .filter(|t| ix.test_figures(t).is_some_and(|f| f.signals.iter().any(|s| s.fired)))
                .count(),
        })
        .collect();
    match sort.as_str() {
        "flaky" => {
            rows.sort_by(|a, b| b.flaky_in.cmp(&a.flaky_in).then(b.failed.cmp(&a.failed)).then(a.name.cmp(&b.name)))
        }
        "name" => {}
        _ => rows.sort_by(|a, b| b.failed.cmp(&a.failed).then(a.name.cmp(&b.name))),
    }
    let matching = rows.len();
    rows.truncate(limit);
    Ok(TestList { sort, matching, total: ix.tests.len(), tests: rows })
}

/// Why a JUnit name is flagged as a harness step counted as a test (the triage's
/// rule, `AnalysisConfig::is_harness`), or `None`.
pub fn harness_step(test: &str) -> Option<String> {
    static CFG: std::sync::OnceLock<citriage_analysis::AnalysisConfig> = std::sync::OnceLock::new();
    let cfg = CFG.get_or_init(citriage_analysis::AnalysisConfig::default);
    cfg.is_harness(test).then(|| {
        format!("{test} is a harness step written into JUnit (cluster bring-up, teardown...), not a test: its failures are the job's, and a flake here is the whole run's")
    })
}

/// A failed test of a build, with the clusters its failure belongs to.
#[derive(Debug, Clone, Serialize)]
pub struct BuildFailure {
    pub name: String,
    pub status: String,
    pub attempt: u32,
    pub duration: Option<f64>,
    pub message: Option<String>,
    /// (profile, stable id, the cluster's first text line).
    pub clusters: Vec<(String, String, String)>,
    /// Why the name is flagged (a harness step), when it is.
    pub flag: Option<String>,
}

/// `/builds/JOB/ID`: one build, what it ran, why it failed.
#[derive(Debug, Clone, Serialize)]
pub struct BuildPage {
    pub job: String,
    pub build: BuildRow,
    pub kind: String,
    pub commit: Option<String>,
    pub problems: Vec<String>,
    pub failed: Vec<BuildFailure>,
    pub passed: usize,
    pub excerpts: Vec<citriage_model::build::LogExcerpt>,
    /// (profile, stable id, first text line, failures of this build in it).
    pub clusters: Vec<(String, String, String, usize)>,
    /// (path, size, link).
    pub artifacts: Vec<(String, Option<u64>, String)>,
    /// The build's folder on gcsweb.
    pub folder: String,
    /// For a build only TestGrid showed: its tab and dashboard (`tab` of `dashboard`),
    /// so the page says what TestGrid does not carry instead of showing nothing.
    pub testgrid_only: Option<String>,
}

/// The view's build of `job` with `id`, and its row id in the store.
pub fn find_build<'a>(ix: &'a WebIndex, job: &str, id: &str) -> Result<&'a BuildLite, WebError> {
    let j = ix.job(job).ok_or_else(|| WebError::NotFound(format!("no stored builds of job {job:?}")))?;
    ix.builds[j.builds.clone()]
        .iter()
        .find(|b| b.build_id == id)
        .ok_or_else(|| WebError::NotFound(format!("job {job:?} has no stored build {id:?}")))
}

/// Assembles a build's page from its stored record, artifacts and cluster memberships.
pub fn build_page(
    ix: &WebIndex,
    b: &BuildLite,
    rec: &citriage_model::build::BuildRecord,
    artifacts: Vec<(String, Option<u64>)>,
    members: &[(String, String, u32)],
) -> BuildPage {
    let first_line = |profile: &str, id: &str| -> String {
        ix.profiles
            .get(profile)
            .and_then(|p| p.clusters.iter().find(|c| c.stored.stable_id == id))
            .map(|c| c.stored.text.lines().next().unwrap_or("").to_string())
            .unwrap_or_default()
    };
    let mut failed = Vec::new();
    let mut passed = 0;
    for (seq, t) in rec.tests.iter().enumerate() {
        if t.status == "passed" {
            passed += 1;
            continue;
        }
        if t.status != "failed" && t.status != "error" {
            continue;
        }
        let clusters = members
            .iter()
            .filter(|(_, _, s)| *s as usize == seq)
            .map(|(p, id, _)| (p.clone(), id.clone(), first_line(p, id)))
            .collect();
        failed.push(BuildFailure {
            name: t.name.clone(),
            status: t.status.clone(),
            attempt: t.attempt,
            duration: t.duration,
            message: t.failure_text.clone(),
            clusters,
            flag: harness_step(&t.name),
        });
    }
    let mut clusters: Vec<(String, String, String, usize)> = Vec::new();
    for (p, id, _) in members {
        match clusters.iter_mut().find(|c| &c.0 == p && &c.1 == id) {
            Some(c) => c.3 += 1,
            None => clusters.push((p.clone(), id.clone(), first_line(p, id), 1)),
        }
    }
    let folder = format!("https://gcsweb.k8s.io/gcs/{}/{}/", b.bucket, b.path);
    let artifacts = artifacts
        .into_iter()
        .map(|(p, size)| {
            let link = format!("{folder}{p}");
            (p, size, link)
        })
        .collect();
    BuildPage {
        job: ix.job_name(b.job).to_string(),
        build: build_row(b),
        kind: b.kind.clone(),
        commit: rec.commit_sha.clone().or_else(|| rec.repo_commit.clone()),
        problems: rec.problems.clone(),
        failed,
        passed,
        excerpts: rec.excerpts.clone(),
        clusters,
        artifacts,
        folder,
        testgrid_only: (rec.origin == "testgrid").then(|| match &rec.testgrid {
            Some(t) => format!(
                "tab {} of dashboard {}",
                t.tab.as_deref().unwrap_or(&rec.job),
                t.dashboards.first().map(String::as_str).unwrap_or("?")
            ),
            None => "TestGrid".to_string(),
        }),
    }
}

/// What the overview leads with: what changed and what is broken now.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Changes {
    /// New and growing patterns of the default profile's latest run, most failures
    /// (in the latest days) first, at most ten.
    pub moving: Vec<DriftRow>,
    /// The window the drift compares (`from` → `to`), when a run is stored.
    pub drift_window: Option<(Day, Day)>,
    /// Jobs whose newest build failed or errored, most failed builds first, at most ten.
    pub failing_jobs: Vec<JobSummary>,
    pub failing_jobs_total: usize,
    /// Payloads rejected (newest first, at most five) and how many in all.
    pub rejected: Vec<(String, String, Option<String>)>,
    pub rejected_total: usize,
    /// What the newest triage reports flag, by kind: the jobs whose dashboard figures
    /// mislead (always failing scored consistent, one PR's retests, ...).
    pub flagged: Vec<(String, String, Vec<String>)>,
    /// Of [`Changes::failing_jobs_total`], those on a release-blocking TestGrid board.
    pub failing_blocking_total: usize,
    /// Day-over-day pattern drift (the newest day against the day before): new,
    /// growing, shrinking and gone patterns, when a run is stored.
    pub since_yesterday: Option<DaySummary>,
    /// Each stored snapshot's severities as the dashboard rates its jobs and as
    /// citriage's corrected figures rate them.
    pub severity: Vec<SeverityCompare>,
}

/// Patterns that moved between the newest day of the clustering run and the day before.
#[derive(Debug, Clone, Serialize)]
pub struct DaySummary {
    pub day: Day,
    pub new: usize,
    pub growing: usize,
    pub shrinking: usize,
    pub gone: usize,
    /// New and growing patterns' failures on the newest day.
    pub failures: u64,
}

/// One snapshot's jobs by severity: as the dashboard rates them and as the corrected
/// figures of their stored builds do (a job without stored builds keeps the
/// dashboard's rating).
#[derive(Debug, Clone, Serialize)]
pub struct SeverityCompare {
    pub dataset: String,
    pub date: Day,
    /// (severity, jobs the dashboard rates so, jobs the corrected figures rate so),
    /// worst first, every level.
    pub rows: Vec<(String, usize, usize)>,
    /// Jobs rated from stored builds.
    pub corrected_jobs: usize,
    pub jobs: usize,
    /// Jobs rated at least two levels worse than the dashboard says, worst first (at
    /// most ten): (job, dashboard's severity, corrected severity, the corrected figure).
    pub worse: Vec<(String, String, String, String)>,
}

fn severity_rank(name: &str) -> usize {
    citriage_analysis::severity::Severity::ALL.iter().position(|s| s.as_str() == name).unwrap_or(usize::MAX)
}

fn severity_compare(ix: &WebIndex) -> Vec<SeverityCompare> {
    use citriage_analysis::severity::Severity;
    let mut out = Vec::new();
    for s in &ix.overview.snapshots {
        let mut dash: BTreeMap<&str, usize> = BTreeMap::new();
        let mut corr: BTreeMap<&str, usize> = BTreeMap::new();
        let mut corrected_jobs = 0;
        let mut worse = Vec::new();
        for j in &s.job_list {
            *dash.entry(j.severity.as_str()).or_default() += 1;
            let figures =
                ix.job(&j.job).or_else(|| ix.job(j.job.strip_prefix("pr:")?)).and_then(|x| x.figures.as_ref());
            match figures.and_then(|f| f.corrected_severity(s.dataset)) {
                Some((sev, figure)) => {
                    corrected_jobs += 1;
                    *corr.entry(sev.as_str()).or_default() += 1;
                    if severity_rank(sev.as_str()) + 2 <= severity_rank(&j.severity) {
                        worse.push((j.job.clone(), j.severity.clone(), sev.as_str().to_string(), figure));
                    }
                }
                None => *corr.entry(j.severity.as_str()).or_default() += 1,
            }
        }
        worse.sort_by(|a, b| severity_rank(&a.2).cmp(&severity_rank(&b.2)).then(a.0.cmp(&b.0)));
        worse.truncate(10);
        let rows = Severity::ALL
            .iter()
            .map(|v| {
                let n = v.as_str();
                (n.to_string(), dash.get(n).copied().unwrap_or(0), corr.get(n).copied().unwrap_or(0))
            })
            .collect();
        out.push(SeverityCompare {
            dataset: s.dataset.as_str().to_string(),
            date: s.date,
            rows,
            corrected_jobs,
            jobs: s.job_list.len(),
            worse,
        });
    }
    out
}

/// [`Changes`] of the view.
pub fn changes(ix: &WebIndex) -> Changes {
    let mut c = Changes::default();
    if let Ok(d) = drift(ix, &BTreeMap::new()) {
        c.drift_window = Some((d.from, d.to));
        // A pattern of one failure is not news: singletons stay on the drift page.
        let mut moving: Vec<DriftRow> = d
            .patterns
            .into_iter()
            .filter(|p| matches!(p.kind, DriftKind::New | DriftKind::Growing) && p.after >= 2)
            .collect();
        moving.sort_by(|a, b| b.after.cmp(&a.after).then(a.stable_id.cmp(&b.stable_id)));
        moving.truncate(10);
        c.moving = moving;
    }
    let day: BTreeMap<String, String> = [("span".to_string(), "1".to_string())].into();
    if let Ok(d) = drift(ix, &day) {
        let mut y = DaySummary { day: d.to, new: 0, growing: 0, shrinking: 0, gone: 0, failures: 0 };
        for p in &d.patterns {
            match p.kind {
                DriftKind::New => y.new += 1,
                DriftKind::Growing => y.growing += 1,
                DriftKind::Shrinking => y.shrinking += 1,
                DriftKind::Gone => y.gone += 1,
                _ => {}
            }
            if matches!(p.kind, DriftKind::New | DriftKind::Growing) {
                y.failures += p.after;
            }
        }
        c.since_yesterday = Some(y);
    }
    c.severity = severity_compare(ix);
    // Release-blocking jobs first, then most failed builds.
    let mut failing: Vec<JobSummary> =
        ix.jobs.iter().map(|j| j.summary.clone()).filter(|j| failing_now_in(ix, &j.job)).collect();
    failing.sort_by(|a, b| {
        b.release_blocking
            .cmp(&a.release_blocking)
            .then((b.failed + b.errored).cmp(&(a.failed + a.errored)))
            .then(a.job.cmp(&b.job))
    });
    c.failing_blocking_total = failing.iter().filter(|j| j.release_blocking).count();
    c.failing_jobs_total = failing.len();
    failing.truncate(10);
    c.failing_jobs = failing;
    let mut rejected: Vec<&crate::index::PayloadRow> =
        ix.payloads.iter().filter(|p| p.phase.eq_ignore_ascii_case("rejected")).collect();
    rejected.sort_by(|a, b| b.created.cmp(&a.created).then(b.tag.cmp(&a.tag)));
    c.rejected_total = rejected.len();
    c.rejected = rejected.iter().take(5).map(|p| (p.tag.clone(), p.stream.clone(), p.verdict.clone())).collect();
    let mut by_kind: BTreeMap<&str, (&str, BTreeSet<&str>)> = BTreeMap::new();
    for (job, flags) in &ix.job_flags {
        for f in flags {
            by_kind.entry(f.kind.as_str()).or_insert((f.reality.as_str(), BTreeSet::new())).1.insert(job.as_str());
        }
    }
    c.flagged = by_kind
        .into_iter()
        .map(|(k, (reality, jobs))| {
            // The reality's first sentence: what the flag means.
            let meaning = reality.split(": ").next().unwrap_or(reality).to_string();
            (k.to_string(), meaning, jobs.into_iter().map(str::to_string).collect())
        })
        .collect();
    c
}
