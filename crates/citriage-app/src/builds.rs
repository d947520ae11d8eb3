//! Stored builds for the use cases: loading them (all, or per job with recent tests
//! only) and the `--as-of` window end their metrics and clusters are computed at.

use crate::error::{Error, Result};
use citriage_analysis::{AnalysisConfig, RuleSet, TriageBuilds};
use citriage_model::build::BuildRecord;
use citriage_model::Day;
use citriage_store::Store;
use std::collections::BTreeSet;

/// Loads stored builds job by job, with test results only for builds started after
/// `tests_since` (all when `None`), and only for `jobs` (dashboard names) when given.
pub fn load_builds_filtered(
    store: &mut Store,
    tests_since: Option<i64>,
    jobs: Option<&BTreeSet<String>>,
) -> Result<Vec<BuildRecord>> {
    let mut out = Vec::new();
    for job in store.build_jobs()? {
        if let Some(set) = jobs {
            if !set.contains(&job) && !set.contains(&format!("pr:{job}")) {
                continue;
            }
        }
        out.extend(store.job_builds_with_tests(&job, tests_since)?);
    }
    Ok(out)
}

/// Loads every stored build with all its tests (small stores and tests).
pub fn load_builds(store: &mut Store) -> Result<Vec<BuildRecord>> {
    load_builds_filtered(store, None, None)
}

/// The stored builds of the jobs a snapshot lists, with the tests of the 8 days before
/// its date: what a triage and its briefs read, gathered job by job and kept compactly
/// ([`TriageBuilds`]: each job's figures computed as it is read, then only its failed
/// results kept). `None` when the store has no build.
pub fn for_snapshot(
    store: &mut Store,
    snapshot: &citriage_model::Snapshot,
    rules: &RuleSet,
    config: &AnalysisConfig,
) -> Result<Option<TriageBuilds>> {
    if !store.has_builds()? {
        return Ok(None);
    }
    let listed: BTreeSet<&str> = snapshot.jobs.iter().map(|j| j.job.as_str()).collect();
    let since = snapshot.meta.date.start_seconds() - 8 * citriage_model::time::DAY;
    let mut out = TriageBuilds::new(snapshot, rules, config);
    for job in store.build_jobs()? {
        if !listed.contains(job.as_str()) && !listed.contains(format!("pr:{job}").as_str()) {
            continue;
        }
        out.add_job(store.job_builds_with_tests(&job, Some(since))?);
    }
    Ok(Some(out))
}

/// Every stored build (without tests); none is bad input that `fetch` remedies.
pub fn require_builds(store: &Store) -> Result<Vec<BuildRecord>> {
    let all = store.builds(None)?;
    if all.is_empty() {
        return Err(Error::remedy(format!("the store {} has no builds: run ", store.path()), "fetch", " first"));
    }
    Ok(all)
}

/// Parses `--as-of`: a date (its last second, UTC) or Unix seconds.
pub fn parse_as_of(s: &str) -> Result<i64> {
    if let Some(d) = Day::parse(s) {
        return Ok(d.end_seconds());
    }
    s.parse::<i64>().map_err(|_| Error::input(format!("--as-of {s:?}: expected YYYY-MM-DD or Unix seconds")))
}

/// The default as-of: the end of the day of the newest stored build, robust to
/// wrong start times ([`citriage_model::time::robust_newest`]: one build dated
/// far ahead, or outside the sane window, does not move it).
pub fn default_as_of(builds: &[BuildRecord]) -> i64 {
    let newest = citriage_model::time::robust_newest(builds.iter().filter_map(|b| b.started)).unwrap_or(0);
    Day::from_unix_seconds(newest).end_seconds()
}

/// `--as-of` when given, else [`default_as_of`] of the stored builds, read as their
/// start times alone; none stored is bad input that `fetch` remedies.
pub fn store_as_of(store: &Store, given: Option<&str>) -> Result<i64> {
    let (starts, n) = store.build_starts()?;
    if n == 0 {
        return Err(Error::remedy(format!("the store {} has no builds: run ", store.path()), "fetch", " first"));
    }
    match given {
        Some(s) => parse_as_of(s),
        None => {
            let newest = citriage_model::time::robust_newest(starts).unwrap_or(0);
            Ok(Day::from_unix_seconds(newest).end_seconds())
        }
    }
}

/// `--as-of` when given, else [`default_as_of`] of the builds.
pub fn as_of(given: Option<&str>, builds: &[BuildRecord]) -> Result<i64> {
    match given {
        Some(s) => parse_as_of(s),
        None => Ok(default_as_of(builds)),
    }
}
