//! Flakes roll-ups across jobs (runbook Phase 1.4 and Phase 8): the tests that flake
//! in the most places (`top-flaky-tests.txt`), the top tests per lane
//! (`top-tests-by-lane.txt`) and the worst jobs across categories (`top30.txt`).

use crate::categorize::Categorized;
use citriage_model::{JobStats, Snapshot};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// A test's flake count summed over jobs.
#[derive(Debug, Clone, Serialize)]
pub struct TestRollup {
    pub test: String,
    pub total: u64,
    pub jobs: Vec<String>,
}

/// Sums per-test flake counts over jobs; most flakes first (ties: more jobs, then name).
fn rollup<'a>(entries: impl Iterator<Item = &'a citriage_model::JobEntry>) -> Vec<TestRollup> {
    let mut m: BTreeMap<&str, (u64, BTreeSet<&str>)> = BTreeMap::new();
    for e in entries {
        if let JobStats::Flakes(f) = &e.stats {
            for (t, c) in f.test_flakes.iter().flatten() {
                let slot = m.entry(t.as_str()).or_default();
                slot.0 += c;
                slot.1.insert(e.job.as_str());
            }
        }
    }
    let mut v: Vec<TestRollup> = m
        .into_iter()
        .map(|(t, (total, jobs))| TestRollup {
            test: t.to_string(),
            total,
            jobs: jobs.into_iter().map(String::from).collect(),
        })
        .collect();
    v.sort_by(|a, b| b.total.cmp(&a.total).then(b.jobs.len().cmp(&a.jobs.len())).then_with(|| a.test.cmp(&b.test)));
    v
}

/// Tests across jobs, most flakes first (ties: more jobs, then name).
pub fn top_flaky_tests(snapshot: &Snapshot) -> Vec<TestRollup> {
    rollup(snapshot.jobs.iter())
}

/// Per lane (category): its tests summed over the lane's jobs, most flakes first.
pub fn top_tests_by_lane(cats: &Categorized) -> Vec<(String, Vec<TestRollup>)> {
    cats.categories
        .iter()
        .filter_map(|c| {
            let v = rollup(c.jobs.iter().map(|j| &j.entry));
            (!v.is_empty()).then(|| (c.name.clone(), v))
        })
        .collect()
}

/// One row of the worst-jobs list.
#[derive(Debug, Clone, Serialize)]
pub struct TopJob {
    pub job: String,
    pub category: String,
    #[serde(flatten)]
    pub stats: JobStats,
}

/// The `n` worst jobs across all categories (oldest failing / least consistent).
pub fn top_jobs(cats: &Categorized, n: usize) -> Vec<TopJob> {
    let mut all: Vec<(&str, &crate::categorize::CategorizedJob)> =
        cats.categories.iter().flat_map(|c| c.jobs.iter().map(move |j| (c.name.as_str(), j))).collect();
    let cmp = |a: &(&str, &crate::categorize::CategorizedJob), b: &(&str, &crate::categorize::CategorizedJob)| {
        crate::severity::sort_key(&a.1.entry.stats)
            .total_cmp(&crate::severity::sort_key(&b.1.entry.stats))
            .then_with(|| a.1.entry.job.cmp(&b.1.entry.job))
    };
    if all.len() > n && n > 0 {
        all.select_nth_unstable_by(n - 1, cmp);
        all.truncate(n);
    }
    all.sort_by(cmp);
    all.truncate(n);
    all.into_iter()
        .map(|(c, j)| TopJob { job: j.entry.job.clone(), category: c.to_string(), stats: j.entry.stats.clone() })
        .collect()
}
