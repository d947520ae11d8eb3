//! Stored builds for the commands: loading them (all, or per job with recent tests
//! only) and the `--as-of` window end their metrics and clusters are computed at.

use crate::context::Failure;
use citriage_model::build::BuildRecord;
use citriage_model::Day;
use citriage_store::Store;

/// Loads stored builds job by job, with test results only for builds started after
/// `tests_since` (all when `None`), and only for `jobs` (dashboard names) when given.
pub fn load_builds_filtered(
    store: &mut Store,
    tests_since: Option<i64>,
    jobs: Option<&std::collections::BTreeSet<String>>,
) -> Result<Vec<BuildRecord>, Failure> {
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
pub fn load_builds(store: &mut Store) -> Result<Vec<BuildRecord>, Failure> {
    load_builds_filtered(store, None, None)
}

/// Parses `--as-of`: a date (its last second, UTC) or Unix seconds.
pub fn parse_as_of(s: &str) -> Result<i64, Failure> {
    if let Some(d) = Day::parse(s) {
        return Ok(d.end_seconds());
    }
    s.parse::<i64>().map_err(|_| Failure::input(format!("--as-of {s:?}: expected YYYY-MM-DD or Unix seconds")))
}

/// The default as-of: the end of the day of the newest stored build, robust to
/// wrong start times ([`citriage_model::time::robust_newest`]: one build dated
/// far ahead, or outside the sane window, does not move it).
pub fn default_as_of(builds: &[BuildRecord]) -> i64 {
    let newest = citriage_model::time::robust_newest(builds.iter().filter_map(|b| b.started)).unwrap_or(0);
    Day::from_unix_seconds(newest).end_seconds()
}
