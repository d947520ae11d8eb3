//! Corrected job and test figures over a window, reported beside kettle's: pass rate
//! with its sample size (ABORTED and ERROR shown apart, never as passes), failing
//! streak in builds and days with the last pass, always-failing jobs called failing,
//! flake signals per test keyed by (classname, name) with harness steps excluded —
//! each signal saying whether it fired — the mass-failure guard, and bias flags.

use super::pfs::{self, Run};
use super::{kettle, DAY};
use citriage_model::build::BuildRecord;
use citriage_model::Day;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Settings of the corrected metrics.
#[derive(Debug, Clone)]
pub struct Settings {
    /// End of the window (Unix seconds); nothing after it is read.
    pub as_of: i64,
    pub window_days: i64,
    /// JUnit names that are harness steps, not tests.
    pub harness: Vec<String>,
    /// A build where more than this share of its tests failed is an environment event.
    pub mass_failure_share: f64,
    /// ... counted only for builds with at least this many tests.
    pub mass_failure_min_tests: usize,
    /// Fewer completed runs than this in the window: the figures say little.
    pub few_runs: u64,
    /// Flip rate (percent) above which the flip signal fires.
    pub flip_rate_threshold: f64,
}

impl Settings {
    pub fn new(as_of: i64, harness: Vec<String>) -> Settings {
        Settings {
            as_of,
            window_days: 7,
            harness,
            mass_failure_share: 0.8,
            mass_failure_min_tests: 5,
            few_runs: 3,
            flip_rate_threshold: 10.0,
        }
    }
}

/// A bias or data-quality flag on a job, with what triggered it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flag {
    /// `few-runs`, `stale`, `only-errors`, `always-failing-scored-consistent`,
    /// `state-error-builds`, `single-pr`.
    pub kind: String,
    pub detail: String,
}

/// One flake signal and whether it fired.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Signal {
    /// `same-commit`, `in-run-retry`, `flip-rate`, `bayesian-pfs`.
    pub kind: &'static str,
    pub fired: bool,
    pub detail: String,
}

/// A test's figures in the window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestFigures {
    pub classname: String,
    pub name: String,
    /// Builds in which the test ran (mass-failure builds excluded).
    pub runs: u64,
    /// Builds in which it failed at least once.
    pub failed_runs: u64,
    pub flip_rate: f64,
    pub pfs: f64,
    pub signals: Vec<Signal>,
    /// Build paths of failing runs, newest first (at most 5), for evidence.
    pub failing_builds: Vec<String>,
}

impl TestFigures {
    pub fn is_flaky(&self) -> bool {
        self.signals.iter().any(|s| s.fired)
    }
}

/// A job's corrected figures in the window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobFigures {
    /// Dashboard naming (`pr:` for presubmits).
    pub job: String,
    pub passes: u64,
    pub failures: u64,
    pub aborted: u64,
    pub errors: u64,
    pub pending: u64,
    /// passes / (passes + failures), `None` without completed runs.
    pub pass_rate: Option<f64>,
    /// The sample behind the pass rate.
    pub sample: u64,
    /// Consecutive failing (FAILURE or ERROR) builds from the newest back.
    pub streak_builds: u64,
    /// Days from the last pass (or the first build) to `as_of`, over all stored history.
    pub streak_days: Option<i64>,
    pub last_pass: Option<Day>,
    pub last_run: Option<Day>,
    /// The newest completed build's result.
    pub latest_result: Option<String>,
    pub always_failing: bool,
    /// kettle's commit consistency, when kettle would list the job.
    pub kettle_consistency: Option<f64>,
    /// 1 − (flaky commits + always-failing commits) / commits: failing commits count against.
    pub corrected_consistency: Option<f64>,
    pub flags: Vec<Flag>,
    /// Builds flagged as environment events by the mass-failure guard.
    pub mass_failure_builds: Vec<String>,
    /// Tests with at least one failure in the window, most failed runs first.
    pub tests: Vec<TestFigures>,
}

/// Computes the corrected figures of every job that has builds in the window or before.
pub fn job_figures(builds: &[BuildRecord], s: &Settings) -> Vec<JobFigures> {
    let kettle: BTreeMap<String, f64> =
        kettle::flakes_rows(builds, s.as_of).into_iter().map(|r| (r.job, r.commit_consistency)).collect();
    let mut by_job: BTreeMap<String, Vec<&BuildRecord>> = BTreeMap::new();
    for b in builds {
        if !super::visible_at(b, s.as_of) {
            continue;
        }
        by_job.entry(b.dashboard_job()).or_default().push(b);
    }
    let harness: BTreeSet<&str> = s.harness.iter().map(String::as_str).collect();
    by_job
        .into_iter()
        .map(|(job, mut bs)| {
            bs.sort_by(|a, b| a.started.cmp(&b.started).then_with(|| a.build_id.cmp(&b.build_id)));
            figures_for(job, &bs, s, &harness, &kettle)
        })
        .collect()
}

fn figures_for(
    job: String,
    all: &[&BuildRecord],
    s: &Settings,
    harness: &BTreeSet<&str>,
    kettle: &BTreeMap<String, f64>,
) -> JobFigures {
    let from = s.as_of - s.window_days * DAY;
    let window: Vec<&BuildRecord> = all.iter().copied().filter(|b| b.started.is_some_and(|t| t > from)).collect();
    let (mut passes, mut failures, mut aborted, mut errors, mut pending) = (0, 0, 0, 0, 0);
    for b in &window {
        match b.result.as_deref() {
            Some("SUCCESS") => passes += 1,
            Some("FAILURE") => failures += 1,
            Some("ABORTED") => aborted += 1,
            Some("ERROR") => errors += 1,
            _ => pending += 1,
        }
    }
    let sample = passes + failures;
    let completed: Vec<&&BuildRecord> =
        all.iter().filter(|b| matches!(b.result.as_deref(), Some("SUCCESS" | "FAILURE" | "ERROR"))).collect();
    let streak_builds = completed.iter().rev().take_while(|b| b.result.as_deref() != Some("SUCCESS")).count() as u64;
    let last_pass_ts = all.iter().filter(|b| b.result.as_deref() == Some("SUCCESS")).filter_map(|b| b.started).max();
    let first_ts = all.iter().filter_map(|b| b.started).min();
    let last_ts = all.iter().filter_map(|b| b.started).max();
    let today = Day::from_unix_seconds(s.as_of);
    let streak_days = if streak_builds == 0 {
        Some(0)
    } else {
        last_pass_ts.or(first_ts).map(|t| today.days_since(Day::from_unix_seconds(t)))
    };
    let latest_result = completed.last().and_then(|b| b.result.clone());

    // Commit-level view with failing commits counted against consistency.
    let mut commits: BTreeMap<Option<&str>, (u64, u64)> = BTreeMap::new();
    for b in &window {
        if let Some(r) = b.result.as_deref() {
            if b.origin != "gcs" {
                continue;
            }
            let e = commits.entry(b.commit_sha.as_deref().or(b.repo_commit.as_deref())).or_default();
            e.1 += 1;
            if r == "SUCCESS" {
                e.0 += 1;
            }
        }
    }
    let ncommits = commits.keys().filter(|k| k.is_some()).count();
    let bad_commits = commits.iter().filter(|(k, (p, r))| k.is_some() && *r > 0 && *p < *r).count();
    let corrected_consistency = (ncommits > 0).then(|| kettle::round3(1.0 - bad_commits as f64 / ncommits as f64));

    // Mass-failure guard.
    let mut mass = Vec::new();
    for b in &window {
        let tests: Vec<_> =
            b.tests.iter().filter(|t| !harness.contains(t.name.as_str()) && t.status != "skipped").collect();
        let failed = tests.iter().filter(|t| t.status == "failed" || t.status == "error").count();
        if tests.len() >= s.mass_failure_min_tests && failed as f64 > s.mass_failure_share * tests.len() as f64 {
            mass.push(b.path.clone());
        }
    }
    let tests = test_figures(&window, &mass, s, harness);

    let mut flags = Vec::new();
    if sample < s.few_runs {
        flags.push(Flag {
            kind: "few-runs".into(),
            detail: format!("{sample} completed run(s) in {} days: the figures rest on little evidence", s.window_days),
        });
    }
    if window.is_empty() {
        flags.push(Flag {
            kind: "stale".into(),
            detail: match last_ts {
                Some(t) => format!("no build in the window; the last started {}", Day::from_unix_seconds(t)),
                None => "no build with a start time".into(),
            },
        });
    } else if errors > 0 && passes + failures + aborted == 0 {
        flags.push(Flag {
            kind: "only-errors".into(),
            detail: format!("all {errors} build(s) in the window errored before running"),
        });
    }
    let k = kettle.get(&job).copied();
    if k == Some(1.0) && passes == 0 && failures > 0 {
        flags.push(Flag {
            kind: "always-failing-scored-consistent".into(),
            detail: format!("kettle consistency 1.0, yet 0 of {failures} run(s) passed"),
        });
    }
    let prowjob_errors = window.iter().filter(|b| b.origin == "prowjob").count();
    if prowjob_errors > 0 {
        flags.push(Flag {
            kind: "state-error-builds".into(),
            detail: format!("{prowjob_errors} build(s) in state=error never reached GCS (invisible to the dashboards)"),
        });
    }
    let failing_prs: BTreeSet<u64> =
        window.iter().filter(|b| b.result.as_deref() == Some("FAILURE")).filter_map(|b| b.pr).collect();
    if job.starts_with("pr:") && failures >= 2 && failing_prs.len() == 1 {
        let pr = failing_prs.iter().next().copied().unwrap_or_default();
        // Name the PR with its repository (the first repo of the build's refs).
        let repo = window
            .iter()
            .find(|b| b.pr == Some(pr))
            .and_then(|b| b.repos.as_deref())
            .and_then(|r| serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(r).ok())
            .and_then(|m| m.keys().next().cloned());
        let name = match repo {
            Some(r) => format!("{r}#{pr}"),
            None => format!("pull request {pr}"),
        };
        flags
            .push(Flag { kind: "single-pr".into(), detail: format!("all {failures} failing run(s) come from {name}") });
    }
    JobFigures {
        job,
        passes,
        failures,
        aborted,
        errors,
        pending,
        pass_rate: (sample > 0).then(|| passes as f64 / sample as f64),
        sample,
        streak_builds,
        streak_days,
        last_pass: last_pass_ts.map(Day::from_unix_seconds),
        last_run: last_ts.map(Day::from_unix_seconds),
        latest_result,
        always_failing: sample >= 2 && passes == 0,
        kettle_consistency: k,
        corrected_consistency,
        flags,
        mass_failure_builds: mass,
        tests,
    }
}

fn test_figures(window: &[&BuildRecord], mass: &[String], s: &Settings, harness: &BTreeSet<&str>) -> Vec<TestFigures> {
    // (classname, name) → per build (in start order): (commit, failed attempts, passed attempts, path)
    type PerBuild<'a> = (Option<&'a str>, u32, u32, &'a str);
    let mut m: BTreeMap<(&str, &str), Vec<PerBuild<'_>>> = BTreeMap::new();
    for b in window {
        if mass.contains(&b.path) {
            continue;
        }
        let mut local: BTreeMap<(&str, &str), (u32, u32)> = BTreeMap::new();
        for t in &b.tests {
            if harness.contains(t.name.as_str()) || t.status == "skipped" {
                continue;
            }
            let e = local.entry((t.classname.as_str(), t.name.as_str())).or_default();
            if t.status == "failed" || t.status == "error" {
                e.0 += 1;
            } else {
                e.1 += 1;
            }
        }
        let commit = b.commit_sha.as_deref().or(b.repo_commit.as_deref());
        for (k, (f, p)) in local {
            m.entry(k).or_default().push((commit, f, p, b.path.as_str()));
        }
    }
    let mut out: Vec<TestFigures> = m
        .into_iter()
        .filter(|(_, runs)| runs.iter().any(|r| r.1 > 0))
        .map(|((classname, name), runs)| {
            let failed_runs = runs.iter().filter(|r| r.1 > 0).count() as u64;
            // 1. same commit, pass and fail
            let mut per_commit: BTreeMap<&str, (bool, bool)> = BTreeMap::new();
            for r in &runs {
                if let Some(c) = r.0 {
                    let e = per_commit.entry(c).or_default();
                    e.0 |= r.1 > 0 && r.2 == 0;
                    e.1 |= r.2 > 0;
                }
            }
            let same_commit: Vec<&str> = per_commit.iter().filter(|(_, (f, p))| *f && *p).map(|(c, _)| *c).collect();
            // 2. in-run retry
            let retried = runs.iter().filter(|r| r.1 > 0 && r.2 > 0).count();
            // 3. flip rate, skipping runs inside streaks of >= 3 consecutive failures
            let outcome: Vec<bool> = runs.iter().map(|r| r.2 > 0).collect(); // true = passed (retries pass)
            let mut considered = vec![true; outcome.len()];
            let mut i = 0;
            while i < outcome.len() {
                if !outcome[i] {
                    let mut j = i;
                    while j < outcome.len() && !outcome[j] {
                        j += 1;
                    }
                    if j - i >= 3 {
                        for c in considered.iter_mut().take(j).skip(i) {
                            *c = false;
                        }
                    }
                    i = j;
                } else {
                    i += 1;
                }
            }
            let seq: Vec<bool> = outcome.iter().zip(&considered).filter(|(_, c)| **c).map(|(o, _)| *o).collect();
            let flips = seq.windows(2).filter(|w| w[0] && !w[1]).count();
            let flip_rate = if seq.is_empty() { 0.0 } else { 100.0 * flips as f64 / seq.len() as f64 };
            // 4. Bayesian PFS
            let pfs_runs: Vec<Run> = runs.iter().map(|r| Run { failed: r.1, passed: r.2 }).collect();
            let p = pfs::pfs(&pfs_runs);
            let signals = vec![
                Signal {
                    kind: "same-commit",
                    fired: !same_commit.is_empty(),
                    detail: if same_commit.is_empty() {
                        "no commit saw both a pass and a failure".into()
                    } else {
                        format!("passed and failed on {} commit(s), e.g. {}", same_commit.len(), same_commit[0])
                    },
                },
                Signal {
                    kind: "in-run-retry",
                    fired: retried > 0,
                    detail: format!("failed then passed within {retried} build(s)"),
                },
                Signal {
                    kind: "flip-rate",
                    fired: flip_rate > s.flip_rate_threshold,
                    detail: format!("{flips} pass→fail flip(s) over {} considered run(s): {flip_rate:.1}%", seq.len()),
                },
                Signal {
                    kind: "bayesian-pfs",
                    fired: p > pfs::FLAKY_PFS,
                    detail: format!("PFS {p:.3} over {} run(s) (flaky above {})", runs.len(), pfs::FLAKY_PFS),
                },
            ];
            let failing_builds = runs.iter().rev().filter(|r| r.1 > 0).take(5).map(|r| r.3.to_string()).collect();
            TestFigures {
                classname: classname.to_string(),
                name: name.to_string(),
                runs: runs.len() as u64,
                failed_runs,
                flip_rate,
                pfs: p,
                signals,
                failing_builds,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.failed_runs.cmp(&a.failed_runs).then_with(|| (&a.classname, &a.name).cmp(&(&b.classname, &b.name)))
    });
    out
}
