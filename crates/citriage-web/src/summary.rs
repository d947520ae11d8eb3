//! The figures the view computes once, when it is built from the store: the
//! overview (latest snapshots by severity and category, drift, store counts), each
//! job's summary, daily pass rates, failures per job or test name, and verifier
//! results' summaries; with the build outcome names every page uses. Plain data with
//! no reference to the view itself, so the view ([`crate::index`]) and the queries
//! over it ([`crate::data`]) both build on this module.

use crate::error::WebError;
use citriage_analysis::{categorize_snapshot, severity, RuleSet};
use citriage_model::number::round3;
use citriage_model::{Dataset, Day};
use citriage_store::Store;
use serde::Serialize;
use std::collections::BTreeMap;

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
    /// Every job of the snapshot with its category and figure, for the jobs list (a
    /// store of snapshots alone is browsed by job through them). Not in the API's
    /// overview, which stays small.
    #[serde(skip)]
    pub job_list: Vec<SnapshotJob>,
}

/// A job as a dashboard snapshot lists it.
#[derive(Debug, Clone, Serialize)]
pub struct SnapshotJob {
    pub job: String,
    pub category: String,
    pub severity: String,
    /// failures: `failing N days`; flakes: `consistency 0.xyz, N flaky tests`.
    pub figure: String,
}

/// A cluster as the overview lists it.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterBrief {
    pub profile: String,
    pub stable_id: String,
    pub key: String,
    pub text: String,
    pub total: u64,
    pub first_seen: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Overview {
    pub snapshots: Vec<DatasetOverview>,
    pub builds: u64,
    /// Test results of the builds in the view's window (skipped tests are not stored).
    pub window_test_results: u64,
    /// The window's length in days.
    pub window_days: i64,
    pub build_jobs: usize,
    /// Clusters of the latest run, per profile.
    pub clusters: BTreeMap<String, usize>,
    /// The ten clusters of the latest run first seen most recently (the first profile stored).
    pub newest_clusters: Vec<ClusterBrief>,
    /// Stored documents (by kind and key, whatever their formats): triage reports,
    /// payload analyses, verifier results.
    pub documents: usize,
}

/// The overview's snapshot and store figures (`window` = the window's test results and
/// its days, as the view's job pass counted them); the cluster part is filled from the
/// profiles once they are indexed (see [`crate::index::fill_overview_clusters`]).
pub fn overview_from(store: &Store, builds: u64, build_jobs: usize, window: (u64, i64)) -> Result<Overview, WebError> {
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
        let job_list = snap
            .jobs
            .iter()
            .map(|e| SnapshotJob {
                job: e.job.clone(),
                category: rules.categorize(&e.job).to_string(),
                severity: severity::of(&e.stats).as_str().to_string(),
                figure: match &e.stats {
                    citriage_model::JobStats::Failures { failing_days } => {
                        format!("failing {failing_days} {}", if *failing_days == 1 { "day" } else { "days" })
                    }
                    citriage_model::JobStats::Flakes(f) => format!("consistency {:.3}", f.consistency),
                },
            })
            .collect();
        snapshots.push(DatasetOverview {
            job_list,
            dataset: ds,
            date: latest.date,
            source: latest.source,
            jobs: snap.jobs.len(),
            by_severity,
            by_category,
            drift,
        });
    }
    Ok(Overview {
        snapshots,
        builds,
        window_test_results: window.0,
        window_days: window.1,
        build_jobs,
        clusters: BTreeMap::new(),
        newest_clusters: Vec::new(),
        documents: 0,
    })
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
    /// Passed over finished (passed, failed, errored) builds of all stored history
    /// (from `first_started` to `last_started`); `None` when none finished. This is not
    /// `citriage metrics`' windowed pass rate, whose sample leaves errored builds out.
    pub pass_rate: Option<f64>,
    /// The start of the oldest stored build: where the pass rate's window begins.
    pub first_started: Option<i64>,
    pub last_started: Option<i64>,
    pub last_outcome: String,
    /// The TestGrid dashboards that show the job (its newest build's `testgrid-dashboards`
    /// annotation); empty when no build names any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dashboards: Vec<String>,
    /// Its TestGrid tab (`testgrid-tab-name`), when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    /// One of its dashboards is a release-blocking board (`sig-release-…-blocking`).
    pub release_blocking: bool,
}

/// A job's summary from its builds' (result, start), oldest first.
pub fn summarize<'a>(job: &str, builds: impl Iterator<Item = (Option<&'a str>, Option<i64>)>) -> JobSummary {
    let mut s = JobSummary { job: job.to_string(), ..JobSummary::default() };
    let mut last = None;
    for (result, started) in builds {
        s.builds += 1;
        match outcome(result) {
            "pass" => s.passed += 1,
            "fail" => s.failed += 1,
            "error" => s.errored += 1,
            "aborted" => s.aborted += 1,
            _ => s.unknown += 1,
        }
        if let Some(t) = started {
            s.first_started = Some(s.first_started.map_or(t, |f: i64| f.min(t)));
        }
        last = Some((result, started));
    }
    let finished = s.passed + s.failed + s.errored;
    s.pass_rate = (finished > 0).then(|| round3(s.passed as f64 / finished as f64));
    if let Some((result, started)) = last {
        s.last_started = started;
        s.last_outcome = outcome(result).to_string();
    }
    s
}

#[derive(Debug, Clone, Serialize)]
pub struct DayRate {
    pub day: Day,
    pub passed: usize,
    /// Finished builds (passed, failed, errored) started that day.
    pub finished: usize,
}

/// Failures of one job or test within a cluster.
#[derive(Debug, Clone, Serialize)]
pub struct NameCount {
    pub name: String,
    pub failures: u64,
    /// Per day of the window, oldest first.
    pub per_day: Vec<u32>,
}

#[derive(Debug, Clone, Serialize)]
pub struct VerificationSummary {
    /// The key of the stored verifier result (kind `verify`).
    pub key: String,
    pub verdict: String,
    pub findings: usize,
    pub unchecked: usize,
}

/// Summarizes a stored verifier result (the JSON `citriage verify --format json` prints).
pub fn verification_summary(key: &str, body: &str) -> Option<VerificationSummary> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    Some(VerificationSummary {
        key: key.to_string(),
        verdict: v["verdict"].as_str().unwrap_or("unknown").to_string(),
        findings: v["findings"].as_array().map_or(0, Vec::len),
        unchecked: v["unchecked"].as_array().map_or(0, Vec::len),
    })
}
