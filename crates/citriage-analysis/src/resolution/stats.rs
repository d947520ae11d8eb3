//! When a fix is confirmed: the statistics.
//!
//! The question is "could the clean runs since the fix be luck?". If the fix did
//! nothing, each run of job `j` would still fail with the pattern with its rate
//! before the fix, `p_j`, independently of the others; the chance that the `k_j`
//! clean runs seen after the fix all came out clean anyway is
//! `Π_j (1 − p_j)^k_j`. The fix is confirmed when that chance is under
//! [`ALPHA`] (5%).
//!
//! `p_j` is estimated **per job**, from the job's runs in the [`WINDOW`] (14 days)
//! before the fix merged, as `f_j / (r_j + 1)`: the runs that failed with the pattern
//! over the runs, with one more clean run counted than was seen. Per job because a
//! pattern often strikes one job every run and another one run in ten: a pooled rate
//! would let clean runs of the rarely hit job confirm the fix as fast as clean runs of
//! the job it broke every time, which is exactly when confirmation should be slowest.
//! The extra clean run keeps the estimate below 1 (a job that failed 3 times out of 3
//! gets 0.75, not 1: one clean run leaves a 25% chance of luck; a single clean run
//! confirms only a job seen failing in all of at least 19 runs) and shrinks estimates made
//! from few runs towards 0, which only ever asks for more clean runs, never fewer:
//! the error it makes is on the side of confirming late. Only jobs where the pattern
//! failed at least once before the fix count (the affected jobs); a run that failed
//! for another reason is neither clean nor a failure of the pattern (it may have
//! stopped before the pattern could show).

use citriage_model::time::{age, DAY};
use serde::Serialize;
use std::collections::BTreeMap;

/// The chance under which clean runs are no longer luck.
pub const ALPHA: f64 = 0.05;

/// How far before the fix the failure rate is measured.
pub const WINDOW: i64 = 14 * DAY;

/// What one affected job says about the fix.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobConfirmation {
    pub job: String,
    /// Runs in the window before the fix, and those that failed with the pattern.
    pub runs_before: u64,
    pub failures_before: u64,
    /// The estimated failure rate per run before the fix: `failures / (runs + 1)`.
    pub rate: f64,
    /// Clean runs after the fix (in builds that contain it).
    pub clean_after: u64,
    /// The median time between the job's runs, when it ran at least twice.
    pub cadence: Option<i64>,
    /// The job's next run: its last run plus its cadence.
    #[serde(skip)]
    pub last_run: Option<i64>,
    /// How many more clean runs of this job would confirm the fix in the plan of
    /// [`Confirmation::plan`] (0 when the others get there first).
    pub more_runs: u64,
}

/// Where confirmation stands.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Confirmation {
    /// Each affected job, by name.
    pub jobs: Vec<JobConfirmation>,
    /// The chance of the clean runs so far if the fix did nothing.
    pub chance: f64,
    pub confirmed: bool,
    /// When enough clean runs will have happened at the jobs' cadences (`None` when
    /// confirmed, or when no job has a cadence to plan with).
    pub eta: Option<i64>,
    /// The plan in words: `3 more runs of ci-kubernetes-e2e-gce, about 6h` (empty when
    /// confirmed).
    pub plan: String,
}

/// The estimated failure rate before a fix from `runs` runs of which `failures`
/// failed with the pattern.
pub fn rate(runs: u64, failures: u64) -> f64 {
    failures as f64 / (runs as f64 + 1.0)
}

/// The median gap between sorted run starts.
pub fn cadence(starts: &[i64]) -> Option<i64> {
    let mut gaps: Vec<i64> = starts.windows(2).map(|w| w[1] - w[0]).filter(|g| *g > 0).collect();
    if gaps.is_empty() {
        return None;
    }
    gaps.sort_unstable();
    Some(gaps[(gaps.len() - 1) / 2])
}

/// The chance of the clean runs if the fix did nothing.
pub fn chance(jobs: &[JobConfirmation]) -> f64 {
    jobs.iter().map(|j| (1.0 - j.rate).powi(j.clean_after.min(i32::MAX as u64) as i32)).product()
}

/// Confirmation from the affected jobs' figures (their `more_runs` filled in), as
/// seen at `now`.
pub fn confirmation(mut jobs: Vec<JobConfirmation>, now: i64) -> Confirmation {
    jobs.sort_by(|a, b| a.job.cmp(&b.job));
    let c = chance(&jobs);
    let confirmed = !jobs.is_empty() && c < ALPHA;
    if confirmed {
        return Confirmation { jobs, chance: c, confirmed, eta: None, plan: String::new() };
    }
    let (more, eta) = schedule(&jobs, c, now);
    for j in &mut jobs {
        j.more_runs = more.get(&j.job).copied().unwrap_or(0);
    }
    let plan = match eta {
        Some(t) => {
            let parts: Vec<String> = jobs
                .iter()
                .filter(|j| j.more_runs > 0)
                .map(|j| {
                    let runs = if j.more_runs == 1 { "run" } else { "runs" };
                    format!("{} more {runs} of {}", j.more_runs, j.job)
                })
                .collect();
            format!("{}, about {}", parts.join(" and "), age((t - now).max(0)))
        }
        None if jobs.is_empty() => "no job failed with the pattern in the 14 days before the fix".into(),
        None => "more clean runs; the affected jobs have not run often enough to say when".into(),
    };
    Confirmation { jobs, chance: c, confirmed, eta, plan }
}

/// Future clean runs of the jobs at their cadences, in time order (ties by job), until
/// the chance falls under [`ALPHA`]: how many of each job, and when the last is.
fn schedule(jobs: &[JobConfirmation], mut chance: f64, now: i64) -> (BTreeMap<String, u64>, Option<i64>) {
    let mut next: Vec<(i64, usize)> = jobs
        .iter()
        .enumerate()
        .filter(|(_, j)| j.rate > 0.0)
        .filter_map(|(i, j)| {
            let c = j.cadence?;
            let mut t = j.last_run.unwrap_or(now) + c;
            if t < now {
                // Overdue: the next run is one cadence after now at the latest.
                t = now + (c - (now - t) % c) % c;
            }
            Some((t, i))
        })
        .collect();
    let mut more = BTreeMap::new();
    for _ in 0..100_000 {
        let Some(k) = next.iter().enumerate().min_by_key(|(_, (t, i))| (*t, jobs[*i].job.as_str())).map(|(k, _)| k)
        else {
            break;
        };
        let (t, i) = next[k];
        chance *= 1.0 - jobs[i].rate;
        *more.entry(jobs[i].job.clone()).or_insert(0) += 1;
        if chance < ALPHA {
            return (more, Some(t));
        }
        next[k].0 = t + jobs[i].cadence.unwrap_or(DAY);
    }
    (BTreeMap::new(), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(name: &str, runs: u64, failures: u64, clean: u64, cadence: Option<i64>, last: i64) -> JobConfirmation {
        JobConfirmation {
            job: name.into(),
            runs_before: runs,
            failures_before: failures,
            rate: rate(runs, failures),
            clean_after: clean,
            cadence,
            last_run: Some(last),
            more_runs: 0,
        }
    }

    #[test]
    fn a_single_clean_run_never_confirms_and_the_rate_stays_under_one() {
        assert_eq!(rate(3, 3), 0.75);
        assert_eq!(rate(0, 0), 0.0);
        // Failing every run for two weeks: (1 - 56/57)^1 = 1.75% < 5%: one clean run
        // does confirm that, but not a job seen failing twice.
        let c = confirmation(vec![job("a", 2, 2, 1, Some(3600), 0)], 0);
        assert!(!c.confirmed && (c.chance - 1.0 / 3.0).abs() < 1e-12, "{c:?}");
        let c = confirmation(vec![job("a", 2, 2, 3, Some(3600), 0)], 0);
        assert!(c.confirmed, "{c:?}");
    }

    #[test]
    fn runs_needed_follow_the_rate_and_the_plan_names_each_job() {
        // p = 30/(60+1): (1-p)^n < 0.05 first at n = 5 (0.0341), not at 4 (0.0675).
        let p = rate(60, 30);
        assert!((1.0 - p).powi(4) > ALPHA && (1.0 - p).powi(5) < ALPHA);
        let c = confirmation(vec![job("ci-kubernetes-e2e-gce", 60, 30, 2, Some(2 * 3600), 10_000)], 10_000);
        assert!(!c.confirmed);
        assert_eq!(c.jobs[0].more_runs, 3);
        assert_eq!(c.eta, Some(10_000 + 3 * 2 * 3600));
        assert_eq!(c.plan, "3 more runs of ci-kubernetes-e2e-gce, about 6h 0m");
        // Two jobs: the runs interleave by time.
        let c = confirmation(vec![job("b", 60, 30, 0, Some(3600), 0), job("a", 60, 30, 0, Some(7200), 0)], 0);
        assert_eq!(c.jobs.iter().map(|j| j.more_runs).collect::<Vec<_>>(), [2, 3], "{c:?}");
        assert_eq!(c.eta, Some(4 * 3600));
        assert_eq!(c.plan, "2 more runs of a and 3 more runs of b, about 4h 0m");
    }

    #[test]
    fn without_a_cadence_there_is_no_date() {
        let c = confirmation(vec![job("a", 1, 1, 0, None, 0)], 0);
        assert_eq!((c.eta, c.confirmed), (None, false));
        assert!(c.plan.contains("not run often enough"), "{}", c.plan);
        let c = confirmation(Vec::new(), 0);
        assert!(!c.confirmed && c.plan.contains("no job failed"), "{}", c.plan);
        assert_eq!(cadence(&[0, 10, 30, 35]), Some(10));
        assert_eq!(cadence(&[5]), None);
    }
}
