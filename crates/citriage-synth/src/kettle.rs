//! The k8s-metrics dashboards (`failures-latest.json`, `flakes-latest.json`)
//! computed from the builds the way kettle's BigQuery SQL and its jq filters
//! do (see the metrics configs in kubernetes/test-infra), per job, for a
//! snapshot time.

use std::collections::BTreeMap;

use serde::Serialize;

use citriage_model::time::DAY;

/// One kettle row: a finished build.
#[derive(Clone, Debug)]
pub struct Row {
    pub started: i64,
    pub finished: i64,
    pub success: bool,
    /// Commit used by the flakes query (PR head for `pr:` jobs, else repo-commit).
    pub commit: String,
    /// Exactly one pull request in `repos` (the "serial PR job" filter).
    pub single_pull: bool,
    /// Test entries (interned name, failed); only kept inside the flakes window.
    pub tests: Vec<(u32, bool)>,
}

/// When a dashboard snapshot is taken.
#[derive(Clone, Copy, Debug)]
pub struct Snapshot {
    /// `current_date()` of the query (days since the epoch).
    pub day: i64,
    /// `current_timestamp()` of the query (epoch seconds).
    pub at: i64,
}

/// `failing_days` if the job is listed in the failures dashboard.
pub fn failures_entry(rows: &[Row], snap: Snapshot) -> Option<i64> {
    let visible = rows.iter().filter(|r| r.finished <= snap.at);
    let mut ran_this_week = false;
    let mut first_run: Option<i64> = None;
    let mut latest_pass: Option<i64> = None;
    for r in visible {
        if r.started > snap.at - 7 * DAY {
            ran_this_week = true;
        }
        first_run = Some(first_run.map_or(r.started, |f: i64| f.min(r.started)));
        if r.success {
            latest_pass = Some(latest_pass.map_or(r.started, |l: i64| l.max(r.started)));
        }
    }
    if !ran_this_week {
        return None;
    }
    let since = latest_pass.or(first_run)?;
    let broken_days = snap.day - since.div_euclid(DAY);
    if latest_pass.is_none() || broken_days > 30 {
        Some(broken_days)
    } else {
        None
    }
}

/// One job's flakes-dashboard entry.
#[derive(Clone, Debug, PartialEq)]
pub struct FlakeEntry {
    /// `round(1 - flaked/commits, 3)`.
    pub consistency: f64,
    pub flakes: u64,
    /// Top ten `(test, commits it flaked on)`, most first, then by name.
    pub test_flakes: Vec<(String, u64)>,
}

/// Test names the SQL leaves out of `test_flakes`.
pub const EXCLUDED_TESTS: &[&str] = &["Test", "DiffResources", "DumpClusterLogs", "DumpFederationLogs"];

/// Whether kettle leaves the job out of its tables: never. Its `exclude_jobs`
/// patterns (`.*(flaky|flake).*`, …) are applied as regexes only by its bulk scan; its
/// stream, through which every finished build arrives, tests them as literal path
/// text, which never matches, so `*flaky*` jobs reach the weekly table too.
pub fn excluded_job(_name: &str) -> bool {
    false
}

/// BigQuery's `ROUND(x, 3)` of `1 - f/c`: it rounds the exact value of the stored
/// binary number (1 − 7/80 is 0.91249999… in binary: 0.912), halfway cases away from zero.
pub fn consistency(flaked: u64, commits: u64) -> f64 {
    if commits == 0 {
        return 1.0;
    }
    let x = 1.0 - (flaked as f64) / (commits as f64);
    let exact = format!("{:.1100}", x.abs());
    let (int, frac) = exact.split_once('.').unwrap_or((&exact, ""));
    let keep = &frac[..3.min(frac.len())];
    let mut thousandths: i64 = format!("{int}{keep:0<3}").parse().unwrap_or(0);
    if frac.as_bytes().get(3).is_some_and(|d| *d >= b'5') {
        thousandths += 1;
    }
    let v = thousandths as f64 / 1000.0;
    if x < 0.0 {
        -v
    } else {
        v
    }
}

/// The flakes-dashboard entry of a job, if it has qualifying builds.
pub fn flakes_entry(kettle_job: &str, rows: &[Row], names: &[String], snap: Snapshot) -> Option<FlakeEntry> {
    if excluded_job(kettle_job) {
        return None;
    }
    let ci = kettle_job.starts_with("ci-");
    // commit -> (passed, runs, test -> failures)
    let mut per: BTreeMap<&str, (u64, u64, BTreeMap<u32, u64>)> = BTreeMap::new();
    for r in rows {
        if r.finished > snap.at || r.started <= snap.at - 7 * DAY {
            continue;
        }
        if !(ci || r.single_pull) {
            continue;
        }
        let e = per.entry(r.commit.as_str()).or_default();
        e.1 += 1;
        if r.success {
            e.0 += 1;
        }
        for &(t, failed) in &r.tests {
            let c = e.2.entry(t).or_insert(0);
            if failed {
                *c += 1;
            }
        }
    }
    if per.is_empty() {
        return None;
    }
    let commits = per.len() as u64;
    let mut flaked_sum = 0u64;
    let mut test_counts: BTreeMap<u32, u64> = BTreeMap::new();
    for (passed, runs, tests) in per.values() {
        if !(*passed == *runs || *passed == 0) {
            flaked_sum += 1;
        }
        for (&t, &f) in tests {
            if f > 0 && f < *runs {
                *test_counts.entry(t).or_insert(0) += 1;
            }
        }
    }
    let mut tf: Vec<(String, u64)> = test_counts
        .into_iter()
        .filter_map(|(t, n)| names.get(t as usize).map(|s| (s.clone(), n)))
        .filter(|(s, _)| !EXCLUDED_TESTS.contains(&s.as_str()))
        .collect();
    tf.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    tf.truncate(10);
    Some(FlakeEntry { consistency: consistency(flaked_sum, commits), flakes: flaked_sum, test_flakes: tf })
}

/// A JSON number printed the way jq prints `tonumber` results (`1`, not `1.0`).
pub fn jq_number(x: f64) -> serde_json::Number {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        serde_json::Number::from(x as i64)
    } else {
        serde_json::Number::from_f64(x).unwrap_or_else(|| serde_json::Number::from(0))
    }
}

#[derive(Serialize)]
struct FailOut {
    failing_days: i64,
}

#[derive(Serialize)]
struct FlakeOut<'a> {
    consistency: serde_json::Number,
    flakes: u64,
    test_flakes: Option<BTreeMap<&'a str, u64>>,
}

/// `failures-latest.json` bytes (jobs sorted by name; `null` when empty,
/// as jq's `add` of nothing).
pub fn failures_json(entries: &BTreeMap<String, i64>) -> Vec<u8> {
    if entries.is_empty() {
        return b"null\n".to_vec();
    }
    let m: BTreeMap<&str, FailOut> = entries.iter().map(|(k, v)| (k.as_str(), FailOut { failing_days: *v })).collect();
    let mut v = serde_json::to_vec_pretty(&m).unwrap_or_default();
    v.push(b'\n');
    v
}

/// `flakes-latest.json` bytes.
pub fn flakes_json(entries: &BTreeMap<String, FlakeEntry>) -> Vec<u8> {
    if entries.is_empty() {
        return b"null\n".to_vec();
    }
    let m: BTreeMap<&str, FlakeOut> = entries
        .iter()
        .map(|(k, e)| {
            let tf = if e.test_flakes.is_empty() {
                None
            } else {
                Some(e.test_flakes.iter().map(|(n, c)| (n.as_str(), *c)).collect())
            };
            (k.as_str(), FlakeOut { consistency: jq_number(e.consistency), flakes: e.flakes, test_flakes: tf })
        })
        .collect();
    let mut v = serde_json::to_vec_pretty(&m).unwrap_or_default();
    v.push(b'\n');
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(day: i64, ok: bool, commit: &str, tests: Vec<(u32, bool)>) -> Row {
        Row {
            started: day * DAY + 3600,
            finished: day * DAY + 7200,
            success: ok,
            commit: commit.into(),
            single_pull: false,
            tests,
        }
    }

    #[test]
    fn failures_semantics() {
        let snap = Snapshot { day: 100, at: 100 * DAY + 43_200 };
        // Last pass 40 days ago, still running: listed with 40.
        let rows = vec![row(60, true, "a", vec![]), row(99, false, "b", vec![])];
        assert_eq!(failures_entry(&rows, snap), Some(40));
        // Passed 10 days ago: not listed.
        let rows = vec![row(90, true, "a", vec![]), row(99, false, "b", vec![])];
        assert_eq!(failures_entry(&rows, snap), None);
        // Never passed, first run 2 days ago: listed with 2.
        let rows = vec![row(98, false, "a", vec![])];
        assert_eq!(failures_entry(&rows, snap), Some(2));
        // Did not run this week: absent.
        let rows = vec![row(50, false, "a", vec![])];
        assert_eq!(failures_entry(&rows, snap), None);
    }

    #[test]
    fn flakes_semantics() {
        let snap = Snapshot { day: 100, at: 100 * DAY + 43_200 };
        let names = vec!["t1".to_string(), "Test".to_string()];
        let rows = vec![
            row(99, false, "c1", vec![(0, true), (1, true)]),
            row(99, true, "c1", vec![(0, false), (1, false)]),
            row(98, false, "c2", vec![(0, true)]),
            row(98, false, "c2", vec![(0, true)]),
            row(97, true, "c3", vec![]),
        ];
        let e = flakes_entry("ci-x", &rows, &names, snap);
        let e = e.unwrap_or(FlakeEntry { consistency: -1.0, flakes: 0, test_flakes: vec![] });
        assert_eq!(e.flakes, 1);
        assert_eq!(e.consistency, 0.667);
        assert_eq!(e.test_flakes, vec![("t1".to_string(), 1)]);
        assert_eq!(flakes_entry("ci-x-flaky", &rows, &names, snap).map(|e| e.flakes), Some(1), "not excluded");
        assert_eq!(consistency(7, 80), 0.912, "1 - 7/80 is 0.91249999… in binary");
        assert_eq!(consistency(1, 16), 0.938, "an exact binary half rounds away from zero");
        assert!(flakes_entry("periodic-x", &rows, &names, snap).is_none());
        assert_eq!(String::from_utf8(serde_json::to_vec(&jq_number(1.0)).unwrap_or_default()).unwrap_or_default(), "1");
    }
}
