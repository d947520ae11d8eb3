//! Corrected job and test figures over a window, reported beside kettle's: pass rate
//! with its sample size (ABORTED and ERROR shown apart, never as passes), failing
//! streak in builds and days with the last pass, always-failing jobs called failing,
//! flake signals per test keyed by (classname, name) with harness steps excluded —
//! each signal saying whether it fired — the mass-failure guard, and bias flags.

use super::pfs::{self, Run};
use super::{kettle, DAY};
use crate::severity::{self, Severity};
use citriage_model::build::BuildRecord;
use citriage_model::number::round3;
use citriage_model::Day;
use citriage_patterns::normalize::{normalize, Profile};
use citriage_patterns::signatures::{Catalogue, FailureClass};
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
    /// A build that failed at least this share of the tests the job typically runs (its
    /// median over the window) is an environment event ...
    pub mass_failure_share: f64,
    /// ... and at least this many tests.
    pub mass_failure_min_tests: usize,
    /// Signatures whose `infra` class marks a failure as the environment's: a build where
    /// at least two failed tests carry one is an environment event, and any single
    /// failure carrying one is no flake evidence.
    pub signatures: Catalogue,
    /// Fewer completed runs than this in the window: the figures say little.
    pub few_runs: u64,
    /// A test must have failed in at least this many runs (outside environment events)
    /// for any flake signal to fire.
    pub min_failed_runs: u64,
    /// The flip signal needs at least this many like-with-like pairs of runs ...
    pub flip_min_pairs: u64,
    /// ... and the lower end of its 95% interval (percent) above this.
    pub flip_rate_threshold: f64,
    /// The PFS signal needs at least this many runs.
    pub pfs_min_runs: u64,
    /// A failure message (normalized first line) that failed at least this many distinct
    /// tests of the job in the window is a shared cause (a harness or environment
    /// problem that hits whichever test runs), not evidence about any one test.
    pub shared_cause_min_tests: usize,
    /// A test that failed in more than this share of its runs is failing, not flaky: no
    /// flake signal fires for it (its detail says so).
    pub max_flaky_share: f64,
    /// The across-PRs signal: the same failure on at least this many PR heads.
    pub across_prs_min: usize,
}

/// Harness steps that prepare the environment: when one fails, the build's test
/// failures are the environment's.
pub fn is_setup_step(name: &str) -> bool {
    name == "Up" || name.contains("BeforeSuite") || name.starts_with("Preparation")
}

impl Settings {
    pub fn new(as_of: i64, harness: Vec<String>) -> Settings {
        Settings {
            as_of,
            window_days: 7,
            harness,
            mass_failure_share: 0.1,
            mass_failure_min_tests: 3,
            signatures: Catalogue::builtin(),
            few_runs: 3,
            min_failed_runs: 3,
            flip_min_pairs: 6,
            flip_rate_threshold: 5.0,
            pfs_min_runs: 10,
            shared_cause_min_tests: 4,
            max_flaky_share: 0.6,
            across_prs_min: 3,
        }
    }
}

/// A bias or data-quality flag on a job, with what triggered it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flag {
    /// `few-runs`, `stale`, `only-errors`, `always-failing-scored-consistent`,
    /// `contradicted-rating`, `state-error-builds`, `single-pr`, `testgrid-only`,
    /// `passed-with-failed-tests`.
    pub kind: String,
    pub detail: String,
}

/// One flake signal and whether it fired.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Signal {
    /// `same-commit`, `in-run-retry`, `flip-rate`, `across-prs`, `bayesian-pfs`.
    pub kind: &'static str,
    pub fired: bool,
    pub detail: String,
    /// The runs the signal rests on (failing runs it counted).
    pub runs: u64,
    /// Build paths of that evidence, newest first (at most 5).
    pub builds: Vec<String>,
}

/// A build whose failures are an environment event, not the tests'.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MassFailure {
    pub build: String,
    pub failed_tests: u64,
    pub tests: u64,
    pub reason: String,
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
    /// Flips between like-with-like runs (same PR head, or consecutive runs of a
    /// periodic or postsubmit job), percent of the pairs.
    pub flip_rate: f64,
    /// The pairs behind the flip rate and its 95% (Wilson) interval, percent.
    pub flip_pairs: u64,
    pub flip_interval: (f64, f64),
    pub pfs: f64,
    pub signals: Vec<Signal>,
    /// Build paths of failing runs, newest first (at most 5), for evidence.
    pub failing_builds: Vec<String>,
    /// Failures left out of the flake evidence: in environment-event builds, with an
    /// infra signature in their own text, or with a cause shared by many tests of the
    /// job (they still count against the job).
    pub environment_failures: u64,
    /// The newest failing run's start (Unix seconds).
    pub last_failure: Option<i64>,
    /// How actionable the flake evidence is: failing runs, weighted up by same-commit
    /// and in-run evidence and down by age; 0 when no signal fired. Tests are listed
    /// by it.
    pub actionability: f64,
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
    /// The window every windowed figure below covers: builds started after the start
    /// of `window_from` and by the end of `window_to` (UTC days), `window_days` long.
    /// Streaks and the last pass look at all stored history; kettle's consistency at
    /// kettle's own 7 days to `window_to`.
    pub window_from: Day,
    pub window_to: Day,
    pub window_days: i64,
    pub passes: u64,
    pub failures: u64,
    pub aborted: u64,
    pub errors: u64,
    pub pending: u64,
    /// passes / (passes + failures) of the window's builds, `None` without completed
    /// runs; ERROR and ABORTED builds are counted apart, not in the sample (the
    /// dashboard's job list counts errored builds as not passing, over all stored builds).
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
    /// The same builds with their failed and run tests and why.
    pub mass_failures: Vec<MassFailure>,
    /// Tests with at least one failure in the window, most failed runs first.
    pub tests: Vec<TestFigures>,
}

impl JobFigures {
    /// The job's severity on a dataset's rubric from these figures, with the figure it
    /// rests on in words: failures, the days since its last pass while its newest build
    /// fails; flakes, the worse of its pass rate and its corrected commit consistency.
    /// `None` when a flakes rating has neither.
    pub fn corrected_severity(&self, dataset: citriage_model::Dataset) -> Option<(Severity, String)> {
        match dataset {
            citriage_model::Dataset::Failures => {
                let days = if self.streak_builds > 0 { self.streak_days.unwrap_or(0).max(0) } else { 0 };
                Some((
                    severity::of_failing_days(u32::try_from(days).unwrap_or(u32::MAX)),
                    format!("failing {days} days ({} builds in a row)", self.streak_builds),
                ))
            }
            citriage_model::Dataset::Flakes => {
                let rate = (self.sample > 0).then(|| self.passes as f64 / self.sample as f64);
                let worst = match (rate, self.corrected_consistency) {
                    (Some(r), Some(c)) => r.min(c),
                    (Some(r), None) => r,
                    (None, Some(c)) => c,
                    (None, None) => return None,
                };
                Some((
                    severity::of_consistency(worst),
                    format!(
                        "{}corrected consistency {}",
                        rate.map(|r| format!("pass rate {:.1}%, ", 100.0 * r)).unwrap_or_default(),
                        self.corrected_consistency.map(|c| format!("{c:.3}")).unwrap_or_else(|| "-".into())
                    ),
                ))
            }
        }
    }
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
            // Builds read from their artifacts or shown by TestGrid (Prow's records of
            // builds that never ran have no commit to speak of).
            if !matches!(b.origin.as_str(), "gcs" | "testgrid") {
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
    let corrected_consistency = (ncommits > 0).then(|| round3(1.0 - bad_commits as f64 / ncommits as f64));

    // Mass-failure guard: environment events, relative to the job's own history.
    let mass_failures = mass_failures(&window, s, harness);
    let mass: Vec<String> = mass_failures.iter().map(|m| m.build.clone()).collect();
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
    if let Some(kc) = k {
        if let Some(detail) = contradiction(kc, passes, sample, corrected_consistency, ncommits, s) {
            flags.push(Flag { kind: "contradicted-rating".into(), detail });
        }
    }
    if let Some(flag) = testgrid_flag(&window, job.starts_with("pr:")) {
        flags.push(flag);
    }
    if let Some(flag) = passed_with_failed_tests(&window, harness) {
        flags.push(flag);
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
        window_from: Day::from_unix_seconds(from + 1),
        window_to: Day::from_unix_seconds(s.as_of),
        window_days: s.window_days,
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
        mass_failures,
        tests,
    }
}

/// The tests a build failed for good: failed or errored, with no later passing
/// attempt in the build, not informing, not a harness step, and not from a JUnit file
/// the build records a problem with (a file cut short may have lost the passing retry).
pub fn failed_for_good<'a>(b: &'a BuildRecord, harness: &BTreeSet<&str>) -> Vec<&'a str> {
    let broken = |file: &str| !file.is_empty() && b.problems.iter().any(|p| p.contains(&format!("{file}: ")));
    let mut last: BTreeMap<(&str, &str), (u32, bool)> = BTreeMap::new();
    for t in b
        .tests
        .iter()
        .filter(|t| t.status != "skipped" && !t.informing && !harness.contains(t.name.as_str()) && !broken(&t.file))
    {
        let e = last.entry((t.classname.as_str(), t.name.as_str())).or_insert((t.attempt, is_failure(&t.status)));
        if t.attempt >= e.0 {
            *e = (t.attempt, is_failure(&t.status));
        }
    }
    last.into_iter().filter(|(_, (_, failed))| *failed).map(|((_, n), _)| n).collect()
}

/// The `passed-with-failed-tests` flag: builds whose result says SUCCESS while tests
/// failed for good in them ([`failed_for_good`]), which every pass rate and
/// consistency then counts as a pass.
fn passed_with_failed_tests(window: &[&BuildRecord], harness: &BTreeSet<&str>) -> Option<Flag> {
    let odd: Vec<(&BuildRecord, usize)> = window
        .iter()
        .filter(|b| b.result.as_deref() == Some("SUCCESS"))
        .map(|b| (*b, failed_for_good(b, harness).len()))
        .filter(|(_, n)| *n > 0)
        .collect();
    let (b, n) = odd.last()?;
    Some(Flag {
        kind: "passed-with-failed-tests".into(),
        detail: format!(
            "{} build(s) in the window say SUCCESS although tests failed in them (the newest, {}: {n} failed test(s)); \
             they are counted as passes",
            odd.len(),
            b.path
        ),
    })
}

/// The `testgrid-only` flag: what the figures of builds only TestGrid showed cannot
/// rest on, said instead of counted as nothing.
fn testgrid_flag(window: &[&BuildRecord], presubmit: bool) -> Option<Flag> {
    let n = window.iter().filter(|b| b.origin == "testgrid").count();
    if n == 0 {
        return None;
    }
    let mut detail = format!(
        "{n} of {} build(s) in the window come from TestGrid alone: their failure texts are TestGrid's messages \
         (at most 140 characters), they have no log excerpts and no finish time, so environment signatures rest \
         on the messages and durations are unknown",
        window.len()
    );
    if presubmit {
        detail.push_str("; TestGrid does not show a presubmit's PR head, so commit consistency leaves them out");
    }
    Some(Flag { kind: "testgrid-only".into(), detail })
}

/// Position of a flakes-dashboard rating, worst first.
fn level(c: f64) -> usize {
    match severity::of_consistency(c) {
        Severity::Critical => 0,
        Severity::Severe => 1,
        Severity::Warning => 2,
        Severity::Moderate => 3,
        _ => 4,
    }
}

/// The `contradicted-rating` detail when the corrected figures (pass rate, corrected
/// consistency) rate the job two or more levels below what the dashboard's consistency
/// rates it, on the dashboard's rubric; both numbers with their windows.
pub fn contradiction(
    kettle: f64,
    passes: u64,
    sample: u64,
    corrected: Option<f64>,
    commits: usize,
    s: &Settings,
) -> Option<String> {
    let rate = (sample > 0).then(|| passes as f64 / sample as f64);
    let worst = match (rate, corrected) {
        (Some(r), Some(c)) => r.min(c),
        (Some(r), None) => r,
        (None, Some(c)) => c,
        (None, None) => return None,
    };
    if level(kettle) < level(worst) + 2 {
        return None;
    }
    let name = |c: f64| severity::of_consistency(c).as_str();
    let to = Day::from_unix_seconds(s.as_of);
    Some(format!(
        "the dashboard rates it {} on kettle consistency {kettle:.3} (7 days to {to}); corrected: {}{} over {} days to {to}, which rates {}",
        name(kettle),
        rate.map(|r| format!("pass rate {:.1}% ({passes} of {sample} runs)", 100.0 * r)).unwrap_or_default(),
        corrected
            .map(|c| format!("{}consistency {c:.3} ({commits} commits, failing commits counted)", if rate.is_some() { ", " } else { "" }))
            .unwrap_or_default(),
        s.window_days,
        name(worst)
    ))
}

/// Whether a failure text carries an infra signature of the catalogue.
fn infra_failure(s: &Settings, text: Option<&str>) -> Option<String> {
    let text = text?;
    s.signatures.match_text(text).into_iter().find(|m| m.class == FailureClass::Infra).map(|m| m.id)
}

fn is_failure(status: &str) -> bool {
    status == "failed" || status == "error"
}

/// The window's builds whose failures are an environment event: a setup step failed;
/// or at least two failed tests carry an infra signature; or the build failed at least
/// `mass_failure_share` of the tests the job typically runs (the median over the
/// window's builds with tests) and at least `mass_failure_min_tests`.
fn mass_failures(window: &[&BuildRecord], s: &Settings, harness: &BTreeSet<&str>) -> Vec<MassFailure> {
    let counts: Vec<(u64, u64)> = window
        .iter()
        .map(|b| {
            let run: Vec<_> =
                b.tests.iter().filter(|t| !harness.contains(t.name.as_str()) && t.status != "skipped").collect();
            (run.len() as u64, run.iter().filter(|t| is_failure(&t.status)).count() as u64)
        })
        .collect();
    let mut sizes: Vec<u64> = counts.iter().map(|c| c.0).filter(|n| *n > 0).collect();
    sizes.sort_unstable();
    let typical = sizes.get(sizes.len() / 2).copied().unwrap_or(0);
    let cut = (s.mass_failure_share * typical as f64).ceil().max(s.mass_failure_min_tests as f64) as u64;
    let mut out = Vec::new();
    for (b, &(tests, failed)) in window.iter().zip(&counts) {
        let setup = b.tests.iter().find(|t| is_setup_step(&t.name) && is_failure(&t.status));
        let mut infra: BTreeMap<String, u64> = BTreeMap::new();
        for t in b.tests.iter().filter(|t| is_failure(&t.status) && !harness.contains(t.name.as_str())) {
            if let Some(id) = infra_failure(s, t.failure_text.as_deref()) {
                *infra.entry(id).or_insert(0) += 1;
            }
        }
        let top_infra = infra.iter().max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)));
        let reason = if let Some(t) = setup {
            Some(format!("setup step {:?} failed", t.name))
        } else if let Some((id, n)) = top_infra.filter(|(_, n)| **n >= 2) {
            Some(format!("{n} failed tests carry the infra signature {id}"))
        } else if failed >= cut && failed > 0 {
            Some(format!("{failed} of {tests} tests failed (the job typically runs {typical}; the cut is {cut})"))
        } else {
            None
        };
        if let Some(reason) = reason {
            out.push(MassFailure { build: b.path.clone(), failed_tests: failed, tests, reason });
        }
    }
    out
}

/// Wilson score interval (95%) of k successes in n trials, as fractions.
pub fn wilson(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let z = 1.96f64;
    let n = n as f64;
    let p = k as f64 / n;
    let d = 1.0 + z * z / n;
    let c = p + z * z / (2.0 * n);
    let h = z * ((p * (1.0 - p) + z * z / (4.0 * n)) / n).sqrt();
    (((c - h) / d).max(0.0), ((c + h) / d).min(1.0))
}

/// One run of a test in one build.
struct TestRun<'a> {
    /// Like-with-like stream: the PR head for presubmits, the job for the others.
    stream: Option<&'a str>,
    commit: Option<&'a str>,
    failed: u32,
    passed: u32,
    path: &'a str,
    started: i64,
    /// Presubmit runs: the cause key of the first failure, and the pull request.
    cause: Option<String>,
    pr: Option<u64>,
}

/// The key a failure's cause is compared by: its first line that says something,
/// normalized (go-junit-report's `message="Failed"` and `=== RUN`/`--- FAIL` headers say
/// only that a test failed).
fn cause_key(text: Option<&str>) -> String {
    let generic = |l: &str| {
        let t = l.trim();
        t.is_empty()
            || matches!(t, "Failed" | "failed" | "FAILED" | "Failure" | "failure" | "Error" | "error")
            || ["=== RUN", "=== CONT", "=== PAUSE", "--- FAIL", "--- PASS"].iter().any(|p| t.starts_with(p))
    };
    let first = text.unwrap_or_default().lines().find(|l| !generic(l)).unwrap_or_default();
    let n = normalize(first, Profile::Default);
    n.chars().take(200).collect()
}

fn test_figures(window: &[&BuildRecord], mass: &[String], s: &Settings, harness: &BTreeSet<&str>) -> Vec<TestFigures> {
    // Failure causes shared by many tests of the job: the harness's or environment's.
    let mut spread: BTreeMap<String, BTreeSet<(&str, &str)>> = BTreeMap::new();
    for b in window.iter().filter(|b| !mass.contains(&b.path)) {
        for t in b.tests.iter().filter(|t| is_failure(&t.status) && !harness.contains(t.name.as_str())) {
            spread.entry(cause_key(t.failure_text.as_deref())).or_default().insert((&t.classname, &t.name));
        }
    }
    // A failure without text (builds read without them) has no known cause: never shared.
    let shared: BTreeSet<&str> = spread
        .iter()
        .filter(|(k, t)| !k.is_empty() && t.len() >= s.shared_cause_min_tests)
        .map(|(k, _)| k.as_str())
        .collect();
    let mut m: BTreeMap<(&str, &str), Vec<TestRun<'_>>> = BTreeMap::new();
    let mut environment: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    for b in window {
        let in_mass = mass.contains(&b.path);
        let presubmit = b.kind == "presubmit" || b.kind == "batch";
        let commit = b.commit_sha.as_deref().or(b.repo_commit.as_deref());
        let mut local: BTreeMap<(&str, &str), (u32, u32, bool)> = BTreeMap::new();
        let mut causes: BTreeMap<(&str, &str), String> = BTreeMap::new();
        for t in &b.tests {
            if harness.contains(t.name.as_str()) || t.status == "skipped" {
                continue;
            }
            let e = local.entry((t.classname.as_str(), t.name.as_str())).or_default();
            if is_failure(&t.status) {
                if presubmit {
                    causes
                        .entry((t.classname.as_str(), t.name.as_str()))
                        .or_insert_with(|| cause_key(t.failure_text.as_deref()));
                }
                e.0 += 1;
                e.2 |= in_mass
                    || infra_failure(s, t.failure_text.as_deref()).is_some()
                    || (!shared.is_empty() && shared.contains(cause_key(t.failure_text.as_deref()).as_str()));
            } else {
                e.1 += 1;
            }
        }
        for (k, (f, p, env)) in local {
            if env {
                // The environment's failure: not evidence about the test.
                *environment.entry(k).or_insert(0) += 1;
                continue;
            }
            m.entry(k).or_default().push(TestRun {
                stream: if presubmit { commit } else { Some("") },
                commit,
                failed: f,
                passed: p,
                path: b.path.as_str(),
                started: b.started.unwrap_or_default(),
                cause: causes.remove(&k),
                pr: b.pr,
            });
        }
    }
    let keys: BTreeSet<(&str, &str)> = m.keys().chain(environment.keys()).copied().collect();
    let mut out: Vec<TestFigures> = keys
        .into_iter()
        .filter_map(|k| {
            let runs = m.remove(&k).unwrap_or_default();
            let env = environment.get(&k).copied().unwrap_or(0);
            if env == 0 && !runs.iter().any(|r| r.failed > 0) {
                return None;
            }
            Some(one_test(k.0, k.1, &runs, env, s))
        })
        .collect();
    out.sort_by(|a, b| {
        b.actionability
            .total_cmp(&a.actionability)
            .then_with(|| b.failed_runs.cmp(&a.failed_runs))
            .then_with(|| (&a.classname, &a.name).cmp(&(&b.classname, &b.name)))
    });
    out
}

fn newest(paths: &[&str]) -> Vec<String> {
    paths.iter().rev().take(5).map(|p| p.to_string()).collect()
}

fn one_test(classname: &str, name: &str, runs: &[TestRun<'_>], environment: u64, s: &Settings) -> TestFigures {
    let failed_runs = runs.iter().filter(|r| r.failed > 0).count() as u64;
    let mostly_failing = failed_runs as f64 > s.max_flaky_share * runs.len() as f64;
    let enough = failed_runs >= s.min_failed_runs && !mostly_failing;
    // 1. Same commit (or PR head): a failing run and a passing run.
    let mut per_commit: BTreeMap<&str, (Vec<&str>, bool)> = BTreeMap::new();
    for r in runs {
        if let Some(c) = r.commit {
            let e = per_commit.entry(c).or_default();
            if r.failed > 0 && r.passed == 0 {
                e.0.push(r.path);
            }
            e.1 |= r.passed > 0;
        }
    }
    let same: Vec<(&str, &Vec<&str>)> =
        per_commit.iter().filter(|(_, (f, p))| !f.is_empty() && *p).map(|(c, (f, _))| (*c, f)).collect();
    let same_builds: Vec<&str> = same.iter().flat_map(|(_, f)| f.iter().copied()).collect();
    // 2. Failed then passed within one build.
    let retried: Vec<&str> = runs.iter().filter(|r| r.failed > 0 && r.passed > 0).map(|r| r.path).collect();
    // 3. Flip rate over like-with-like pairs: consecutive runs of one stream, leaving
    // out runs inside streaks of 3 or more failures (a breakage, not a flake).
    let outcome: Vec<bool> = runs.iter().map(|r| r.passed > 0).collect();
    let mut considered = vec![true; outcome.len()];
    let mut i = 0;
    while i < outcome.len() {
        if outcome[i] {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < outcome.len() && !outcome[j] {
            j += 1;
        }
        if j - i >= 3 {
            considered[i..j].iter_mut().for_each(|c| *c = false);
        }
        i = j;
    }
    let mut last: BTreeMap<&str, bool> = BTreeMap::new();
    let (mut pairs, mut flips) = (0u64, 0u64);
    let mut flip_builds: Vec<&str> = Vec::new();
    for (r, (&o, &c)) in runs.iter().zip(outcome.iter().zip(&considered)) {
        let Some(stream) = r.stream.filter(|_| c) else { continue };
        if let Some(prev) = last.insert(stream, o) {
            pairs += 1;
            if prev != o {
                flips += 1;
                if !o {
                    flip_builds.push(r.path);
                }
            }
        }
    }
    let flip_rate = if pairs == 0 { 0.0 } else { 100.0 * flips as f64 / pairs as f64 };
    let (lo, hi) = wilson(flips, pairs);
    let flip_interval = (100.0 * lo, 100.0 * hi);
    // 4. The same failure on pull requests that do not share a head: a presubmit flake
    // recurs across unrelated changes, a change's own regression stays on its PR.
    let mut across: BTreeMap<&str, BTreeMap<u64, &str>> = BTreeMap::new();
    for r in runs.iter().filter(|r| r.failed > 0 && r.passed == 0) {
        if let (Some(c), Some(pr)) = (r.cause.as_deref(), r.pr) {
            across.entry(c).or_default().entry(pr).or_insert(r.path);
        }
    }
    let widest = across.values().max_by_key(|h| h.len());
    let across_builds: Vec<&str> = widest.map(|h| h.values().copied().collect()).unwrap_or_default();
    // 5. Bayesian PFS.
    let pfs_runs: Vec<Run> = runs.iter().map(|r| Run { failed: r.failed, passed: r.passed }).collect();
    let p = pfs::pfs(&pfs_runs);
    let failing_paths: Vec<&str> = runs.iter().filter(|r| r.failed > 0).map(|r| r.path).collect();
    let signals = vec![
        Signal {
            kind: "same-commit",
            fired: enough && !same.is_empty(),
            detail: match same.first() {
                None => "no commit saw both a pass and a failure".into(),
                Some((c, _)) => format!("passed and failed on {} commit(s), e.g. {c}", same.len()),
            },
            runs: same_builds.len() as u64,
            builds: newest(&same_builds),
        },
        Signal {
            kind: "in-run-retry",
            fired: !retried.is_empty() && !mostly_failing,
            detail: if mostly_failing {
                format!(
                    "failed in {failed_runs} of {} runs: failing, not flaky (no signal fires above {:.0}%)",
                    runs.len(),
                    100.0 * s.max_flaky_share
                )
            } else {
                format!("failed then passed within {} build(s)", retried.len())
            },
            runs: retried.len() as u64,
            builds: newest(&retried),
        },
        Signal {
            kind: "flip-rate",
            fired: enough && pairs >= s.flip_min_pairs && flips >= 2 && flip_interval.0 > s.flip_rate_threshold,
            detail: format!(
                "{flips} flip(s) over {pairs} like-with-like pair(s) (same PR head, or consecutive runs): {flip_rate:.1}% (95% interval {:.1}–{:.1}%; fires when {} or more pairs and above {:.0}%)",
                flip_interval.0, flip_interval.1, s.flip_min_pairs, s.flip_rate_threshold
            ),
            runs: flip_builds.len() as u64,
            builds: newest(&flip_builds),
        },
        Signal {
            kind: "across-prs",
            fired: enough && across_builds.len() >= s.across_prs_min,
            detail: format!(
                "the same failure on {} unrelated pull request(s) (fires at {})",
                across_builds.len(),
                s.across_prs_min
            ),
            runs: across_builds.len() as u64,
            builds: newest(&across_builds),
        },
        Signal {
            kind: "bayesian-pfs",
            fired: enough && runs.len() as u64 >= s.pfs_min_runs && p > pfs::FLAKY_PFS,
            detail: format!(
                "PFS {p:.3} over {} run(s) (flaky above {} with {} or more runs)",
                runs.len(),
                pfs::FLAKY_PFS,
                s.pfs_min_runs
            ),
            runs: failed_runs,
            builds: newest(&failing_paths),
        },
    ];
    let last_failure = runs.iter().filter(|r| r.failed > 0).map(|r| r.started).max();
    let fired = signals.iter().any(|x| x.fired);
    let actionability = if fired {
        let age_days = match (last_failure, runs.iter().map(|r| r.started).max()) {
            (Some(f), Some(newest)) => ((newest - f).max(0) / DAY) as f64,
            _ => 0.0,
        };
        (failed_runs as f64 + 2.0 * same_builds.len() as f64 + 2.0 * retried.len() as f64) / (1.0 + age_days / 7.0)
    } else {
        0.0
    };
    TestFigures {
        classname: classname.to_string(),
        name: name.to_string(),
        runs: runs.len() as u64,
        failed_runs,
        flip_rate,
        flip_pairs: pairs,
        flip_interval,
        pfs: p,
        signals,
        failing_builds: newest(&failing_paths),
        environment_failures: environment,
        last_failure,
        actionability,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use citriage_model::build::StoredTest;

    const T0: i64 = 1_795_000_000;

    fn test(name: &str, failed: bool, text: &str) -> StoredTest {
        StoredTest {
            file: "artifacts/junit_01.xml".into(),
            suite: String::new(),
            classname: "c".into(),
            name: name.into(),
            status: if failed { "failed" } else { "passed" }.into(),
            duration: None,
            failure_text: failed.then(|| text.to_string()),
            attempt: 0,
            informing: false,
            kettle_name: Some(name.into()),
        }
    }

    fn build(n: i64, commit: &str, pass: bool, tests: Vec<StoredTest>) -> BuildRecord {
        BuildRecord {
            bucket: "b".into(),
            path: format!("logs/ci-x/{n}"),
            job: "ci-x".into(),
            build_id: n.to_string(),
            kind: "periodic".into(),
            pr: None,
            commit_sha: Some(commit.into()),
            repo_commit: Some(commit.into()),
            repo_version: Some(commit.into()),
            repos: None,
            started: Some(T0 + n * 3_600),
            finished: Some(T0 + n * 3_600 + 600),
            duration: Some(600),
            result: Some(if pass { "SUCCESS" } else { "FAILURE" }.into()),
            state: None,
            executor: None,
            origin: "gcs".into(),
            problems: Vec::new(),
            complete: true,
            tests,
            artifacts: Vec::new(),
            excerpts: Vec::new(),
            kettle: None,
            testgrid: None,
            versions: Vec::new(),
        }
    }

    fn settings() -> Settings {
        Settings::new(T0 + 40 * 3_600, Vec::new())
    }

    #[test]
    fn a_quarter_pass_rate_rated_good_is_contradicted() {
        // Four commits, one run each: no commit flaked, so kettle says 1.0 (good).
        let builds: Vec<BuildRecord> =
            (0..4).map(|i| build(i, &format!("c{i}"), i == 0, vec![test("a", i != 0, "boom")])).collect();
        let f = &job_figures(&builds, &settings())[0];
        assert_eq!(f.kettle_consistency, Some(1.0));
        let flag = f.flags.iter().find(|x| x.kind == "contradicted-rating").expect("flagged");
        assert!(flag.detail.contains("good on kettle consistency 1.000"), "{}", flag.detail);
        assert!(flag.detail.contains("pass rate 25.0% (1 of 4 runs)"), "{}", flag.detail);
        assert!(flag.detail.contains("critical"), "{}", flag.detail);
        // Nineteen of twenty passing: good on both.
        let ok: Vec<BuildRecord> = (0..20).map(|i| build(i, &format!("c{i}"), i != 0, vec![])).collect();
        assert!(job_figures(&ok, &settings())[0].flags.iter().all(|x| x.kind != "contradicted-rating"));
    }

    #[test]
    fn environment_events_and_shared_causes_are_no_flake_evidence() {
        let mut builds = Vec::new();
        for i in 0..20 {
            let mut tests: Vec<StoredTest> = (0..20).map(|k| test(&format!("t{k}"), false, "")).collect();
            if i % 5 == 1 {
                // A mass failure: 12 of 20 tests, the cluster gone.
                for t in tests.iter_mut().skip(8) {
                    *t = test(&t.name.clone(), true, "dial tcp 10.0.0.1:6443: connect: connection refused");
                }
            }
            if i % 4 == 2 {
                // The harness's own problem, hitting whichever test runs.
                let k = (i as usize * 7) % 20;
                tests[k] = test(&format!("t{k}"), true, "test_server.go:12: apiserver did not become ready");
            }
            if i % 3 == 0 {
                // A real flake: its own message, same commit as a pass.
                tests[0] = test("t0", true, "drain: namespace is terminating");
            }
            builds.push(build(i, &format!("c{}", i / 2), i % 3 != 0, tests));
        }
        let f = &job_figures(&builds, &settings())[0];
        assert_eq!(f.mass_failures.len(), 4, "{:?}", f.mass_failures);
        let flaky: Vec<&str> = f.tests.iter().filter(|t| t.is_flaky()).map(|t| t.name.as_str()).collect();
        assert_eq!(flaky, ["t0"], "{:#?}", f.tests);
        assert!(f.tests.iter().any(|t| t.environment_failures > 0 && !t.is_flaky()));
        let t0 = &f.tests[0];
        assert_eq!(t0.name, "t0", "the flaky test is ranked first");
        let same = t0.signals.iter().find(|x| x.kind == "same-commit").unwrap();
        assert!(same.fired && same.runs > 0 && !same.builds.is_empty());
    }

    #[test]
    fn wilson_interval() {
        let (lo, hi) = wilson(2, 10);
        assert!((lo - 0.0567).abs() < 1e-3 && (hi - 0.5098).abs() < 1e-3, "{lo} {hi}");
        assert_eq!(wilson(0, 0), (0.0, 1.0));
    }

    #[test]
    fn a_pass_with_tests_failed_for_good_is_flagged_and_retries_informing_and_broken_files_are_not() {
        let flagged = |tests: Vec<StoredTest>, problems: Vec<String>| {
            let mut b = build(1, "c1", true, tests);
            b.problems = problems;
            job_figures(&[b], &settings())[0].flags.iter().any(|f| f.kind == "passed-with-failed-tests")
        };
        assert!(flagged(vec![test("a", true, "boom"), test("b", false, "")], vec![]));
        // Failed, then passed on a retry in the same build.
        let mut retry = test("a", false, "");
        retry.attempt = 1;
        assert!(!flagged(vec![test("a", true, "boom"), retry], vec![]));
        let mut informing = test("a", true, "boom");
        informing.informing = true;
        assert!(!flagged(vec![informing], vec![]));
        // From a JUnit file the build could not read whole.
        assert!(!flagged(
            vec![test("a", true, "boom")],
            vec!["gs://b/logs/ci-x/1/artifacts/junit_01.xml: malformed XML near byte 9".into()]
        ));
        // A failing build with failed tests is no surprise.
        let b = build(2, "c2", false, vec![test("a", true, "boom")]);
        assert!(!job_figures(&[b], &settings())[0].flags.iter().any(|f| f.kind == "passed-with-failed-tests"));
    }
}
