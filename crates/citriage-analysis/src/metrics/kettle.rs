//! The k8s-metrics dashboards' figures, computed from raw builds with the semantics of
//! kettle's SQL (`metrics/configs/failures-config.yaml` and `flakes-config.yaml`):
//! `failing_days` and the >30-days-or-never-passed filter; per-(job, commit) flake
//! logic, commit and build consistency rounded to three decimals, `flakes`, and the
//! top-10 `test_flakes` with the exclusion list. The one liberty taken: ties in the
//! top-10 order, unspecified in SQL, are broken by test name.

use super::{kettle_rows, KettleTable, DAY};
use citriage_model::build::BuildRecord;
use citriage_model::number::round3;
use citriage_model::Day;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Test names the flakes query leaves out.
pub const EXCLUDED_TESTS: [&str; 4] = ["Test", "DiffResources", "DumpClusterLogs", "DumpFederationLogs"];

/// One row of the failures query (before its jq filter).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailuresRow {
    pub job: String,
    pub latest_pass: Option<i64>,
    pub weekly_builds: u64,
    pub first_run: Day,
    pub latest_run: Day,
    pub broken_days: i64,
}

/// The failures query: every job that started a build in the 7 days before `as_of`.
pub fn failures_rows(builds: &[BuildRecord], as_of: i64) -> Vec<FailuresRow> {
    struct Acc {
        weekly: u64,
        first: i64,
        last: i64,
        latest_pass: Option<i64>,
    }
    let mut m: BTreeMap<String, Acc> = BTreeMap::new();
    for b in kettle_rows(builds, as_of, KettleTable::All) {
        let s = b.started.unwrap_or_default();
        let a = m.entry(b.dashboard_job()).or_insert(Acc { weekly: 0, first: s, last: s, latest_pass: None });
        a.first = a.first.min(s);
        a.last = a.last.max(s);
        if s > as_of - 7 * DAY {
            a.weekly += 1;
        }
        if b.kettle_result() == Some("SUCCESS") {
            a.latest_pass = Some(a.latest_pass.map_or(s, |p| p.max(s)));
        }
    }
    let today = Day::from_unix_seconds(as_of);
    m.into_iter()
        .filter(|(_, a)| a.weekly > 0)
        .map(|(job, a)| {
            let anchor = match a.latest_pass {
                Some(p) => Day::from_unix_seconds(p),
                None => Day::from_unix_seconds(a.first),
            };
            FailuresRow {
                job,
                latest_pass: a.latest_pass,
                weekly_builds: a.weekly,
                first_run: Day::from_unix_seconds(a.first),
                latest_run: Day::from_unix_seconds(a.last),
                broken_days: today.days_since(anchor),
            }
        })
        .collect()
}

/// `failures-latest.json`: jobs that never passed or have not passed for more than 30 days.
pub fn failures_snapshot(rows: &[FailuresRow]) -> BTreeMap<String, i64> {
    rows.iter()
        .filter(|r| r.latest_pass.is_none() || r.broken_days > 30)
        .map(|r| (r.job.clone(), r.broken_days))
        .collect()
}

/// One row of the flakes query.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlakesRow {
    pub job: String,
    pub build_consistency: f64,
    pub commit_consistency: f64,
    pub flakes: u64,
    pub runs: u64,
    pub commits: u64,
    /// Top ten (test, flaky commits), most first.
    pub flakiest: Vec<(String, u64)>,
}

/// Whether a build's repos text names exactly one PR (`split(replace(repo, ', ', ''), ',')` has two parts).
pub fn serial_pr(repos: Option<&str>) -> bool {
    repos.is_some_and(|r| r.replace(", ", "").split(',').count() == 2)
}

/// Kettle's `regexp_extract(repo, r'[^,]+,\d+:([a-f0-9]+)"')`: the PR head of a repos text.
pub fn pr_head(repos: &str) -> Option<String> {
    // Leftmost match of `[^,]+,\d+:([a-f0-9]+)"` without a regex engine: a comma
    // preceded by at least one character, digits, a colon, hex digits, a quote.
    let b = repos.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c != b',' || i == 0 || b[i - 1] == b',' {
            continue;
        }
        let mut j = i + 1;
        let d0 = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j == d0 || j >= b.len() || b[j] != b':' {
            continue;
        }
        j += 1;
        let h0 = j;
        while j < b.len() && matches!(b[j], b'a'..=b'f' | b'0'..=b'9') {
            j += 1;
        }
        if j > h0 && j < b.len() && b[j] == b'"' {
            return Some(repos[h0..j].to_string());
        }
    }
    None
}

/// The flakes query over the 7 days before `as_of`.
pub fn flakes_rows(builds: &[BuildRecord], as_of: i64) -> Vec<FlakesRow> {
    // (job, commit) → (passed, runs, test name → failures)
    #[derive(Default)]
    struct Group {
        passed: u64,
        runs: u64,
        tests: HashMap<String, u64>,
    }
    let mut groups: BTreeMap<(String, Option<String>), Group> = BTreeMap::new();
    for b in kettle_rows(builds, as_of, KettleTable::Week) {
        let s = b.started.unwrap_or_default();
        if s <= as_of - 7 * DAY {
            continue;
        }
        let job = b.dashboard_job();
        let is_pr = job.starts_with("pr:");
        // `(version != 'unknown' or repo_commit is not null)`: a NULL version compares as NULL.
        let version = b.kettle_version();
        let repo_commit = b.kettle_repo_commit();
        if version.is_none_or(|v| v == "unknown") && repo_commit.is_none() {
            continue;
        }
        if !(job.starts_with("ci-") || serial_pr(b.kettle_repos())) {
            continue;
        }
        let commit = if is_pr { b.kettle_repos().and_then(pr_head) } else { repo_commit.or(version).map(String::from) };
        let g = groups.entry((job, commit)).or_default();
        if let Some(r) = b.kettle_result() {
            g.runs += 1;
            if r == "SUCCESS" {
                g.passed += 1;
            }
        }
        for t in &b.tests {
            if let Some(k) = &t.kettle_name {
                let e = g.tests.entry(k.clone()).or_insert(0);
                if t.status == "failed" {
                    *e += 1;
                }
            }
        }
    }
    struct JobAcc {
        consistent_runs: u64,
        runs: u64,
        flaked: u64,
        commits: BTreeSet<String>,
        tests: HashMap<String, u64>,
    }
    let mut jobs: BTreeMap<String, JobAcc> = BTreeMap::new();
    for ((job, commit), g) in groups {
        let flaked = !(g.passed == g.runs || g.passed == 0);
        let a = jobs.entry(job).or_insert(JobAcc {
            consistent_runs: 0,
            runs: 0,
            flaked: 0,
            commits: BTreeSet::new(),
            tests: HashMap::new(),
        });
        a.consistent_runs += if flaked { g.passed } else { g.runs };
        a.runs += g.runs;
        a.flaked += u64::from(flaked);
        if let Some(c) = commit {
            a.commits.insert(c);
        }
        for (name, failures) in g.tests {
            if failures > 0 && failures < g.runs {
                *a.tests.entry(name).or_insert(0) += 1;
            }
        }
    }
    jobs.into_iter()
        .filter(|(_, a)| a.runs > 0 && !a.commits.is_empty())
        .map(|(job, a)| {
            let mut flakiest: Vec<(String, u64)> =
                a.tests.into_iter().filter(|(n, _)| !EXCLUDED_TESTS.contains(&n.as_str())).collect();
            flakiest.sort_by(|x, y| y.1.cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
            flakiest.truncate(10);
            FlakesRow {
                job,
                build_consistency: round3(a.consistent_runs as f64 / a.runs as f64),
                commit_consistency: round3(1.0 - a.flaked as f64 / a.commits.len() as f64),
                flakes: a.flaked,
                runs: a.runs,
                commits: a.commits.len() as u64,
                flakiest,
            }
        })
        .collect()
}

/// `failures-latest.json` text (keys sorted, one job per line).
pub fn failures_json(rows: &[FailuresRow]) -> String {
    let snap = failures_snapshot(rows);
    let mut s = String::from("{");
    for (i, (job, days)) in snap.iter().enumerate() {
        s.push_str(if i == 0 { "\n  " } else { ",\n  " });
        s.push_str(&format!("{}: {{\"failing_days\": {days}}}", serde_json::Value::from(job.as_str())));
    }
    s.push_str(if snap.is_empty() { "}\n" } else { "\n}\n" });
    s
}

/// A number as jq prints it: integral values without a fraction (`1`, not `1.0`).
pub fn jq_number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        serde_json::Value::from(x).to_string()
    }
}

/// `flakes-latest.json` text (keys sorted; `test_flakes` null when no test flaked).
pub fn flakes_json(rows: &[FlakesRow]) -> String {
    let mut s = String::from("{");
    for (i, r) in rows.iter().enumerate() {
        s.push_str(if i == 0 { "\n  " } else { ",\n  " });
        let tf = if r.flakiest.is_empty() {
            "null".to_string()
        } else {
            let items: Vec<String> =
                r.flakiest.iter().map(|(t, n)| format!("{}: {n}", serde_json::Value::from(t.as_str()))).collect();
            format!("{{{}}}", items.join(", "))
        };
        s.push_str(&format!(
            "{}: {{\"consistency\": {}, \"flakes\": {}, \"test_flakes\": {tf}}}",
            serde_json::Value::from(r.job.as_str()),
            jq_number(r.commit_consistency),
            r.flakes
        ));
    }
    s.push_str(if rows.is_empty() { "}\n" } else { "\n}\n" });
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pr_head_like_the_regex() {
        assert_eq!(pr_head(r#"{"k/k": "master:5feab0,93264:abc123"}"#).as_deref(), Some("abc123"));
        assert_eq!(pr_head(r#"{"k/k": "master"}"#), None);
        assert_eq!(pr_head(r#"{"k/k": "master:5f,93264:ABC"}"#), None, "upper-case hex is not matched");
        assert_eq!(pr_head(r#"{"k/k": "master:5f,x,93264:ab"}"#).as_deref(), Some("ab"));
    }
}
