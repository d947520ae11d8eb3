//! Drift between two snapshots of the same dataset (runbook Phase 6): jobs added,
//! removed (recovered or dropped), reappeared after an absence, the failures
//! integrity check (a job failing in both snapshots must have `failing_days` grown by
//! exactly the days between them), and flakes consistency moves past a threshold.

use crate::severity;
use citriage_model::{Day, JobEntry, JobStats, Snapshot};
use serde::Serialize;
use std::collections::BTreeSet;

/// A job that entered or left the dashboard.
#[derive(Debug, Clone, Serialize)]
pub struct DriftJob {
    #[serde(flatten)]
    pub entry: JobEntry,
}

/// A job that is back after being absent from the prior snapshot.
#[derive(Debug, Clone, Serialize)]
pub struct Reappeared {
    pub job: String,
    /// The newest earlier snapshot that listed it.
    pub last_listed: Day,
}

/// How a common job broke the integrity rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ViolationKind {
    /// Fewer days than expected: the job passed in between (its streak restarted).
    Reset,
    /// More days than elapsed: the count jumped (its last pass fell out of the data).
    Jumped,
}

/// A common job whose failing_days did not grow by the days between snapshots.
#[derive(Debug, Clone, Serialize)]
pub struct IntegrityViolation {
    pub job: String,
    pub prior: u32,
    pub now: u32,
    pub expected: i64,
    pub kind: ViolationKind,
}

/// Result of the failures integrity check over the common set.
#[derive(Debug, Clone, Serialize)]
pub struct Integrity {
    pub common: usize,
    pub consistent: usize,
    pub violations: Vec<IntegrityViolation>,
}

/// A flakes job whose consistency moved by more than the threshold.
#[derive(Debug, Clone, Serialize)]
pub struct ConsistencyMove {
    pub job: String,
    pub prior: f64,
    pub now: f64,
    pub delta: f64,
}

/// Everything that changed between two snapshots.
#[derive(Debug, Clone, Serialize)]
pub struct Drift {
    pub prior_date: Day,
    pub now_date: Day,
    pub prior_source: String,
    pub days_between: i64,
    /// Most severe first.
    pub added: Vec<DriftJob>,
    /// Most severe (in the prior) first; recovered or dropped out of the window.
    pub removed: Vec<DriftJob>,
    pub reappeared: Vec<Reappeared>,
    pub integrity: Option<Integrity>,
    pub worsened: Vec<ConsistencyMove>,
    pub improved: Vec<ConsistencyMove>,
    pub threshold: f64,
}

/// Compares `now` with `prior`. `older` lists the job sets of snapshots before the
/// prior one (newest first) so reappearances can be told apart from new jobs.
pub fn drift(now: &Snapshot, prior: &Snapshot, older: &[(Day, BTreeSet<String>)], threshold: f64) -> Drift {
    let days_between = now.meta.date.days_since(prior.meta.date);
    let mut added: Vec<DriftJob> =
        now.jobs.iter().filter(|e| prior.get(&e.job).is_none()).map(|e| DriftJob { entry: e.clone() }).collect();
    let mut removed: Vec<DriftJob> =
        prior.jobs.iter().filter(|e| now.get(&e.job).is_none()).map(|e| DriftJob { entry: e.clone() }).collect();
    let by_severity = |a: &DriftJob, b: &DriftJob| {
        severity::sort_key(&a.entry.stats)
            .total_cmp(&severity::sort_key(&b.entry.stats))
            .then_with(|| a.entry.job.cmp(&b.entry.job))
    };
    added.sort_by(by_severity);
    removed.sort_by(by_severity);
    let mut reappeared: Vec<Reappeared> = added
        .iter()
        .filter_map(|a| {
            older
                .iter()
                .find(|(_, jobs)| jobs.contains(&a.entry.job))
                .map(|(d, _)| Reappeared { job: a.entry.job.clone(), last_listed: *d })
        })
        .collect();
    reappeared.sort_by(|a, b| a.job.cmp(&b.job));

    let mut integrity = None;
    let mut worsened = Vec::new();
    let mut improved = Vec::new();
    let mut common = 0usize;
    let mut violations = Vec::new();
    for e in &now.jobs {
        let Some(p) = prior.get(&e.job) else { continue };
        common += 1;
        match (&p.stats, &e.stats) {
            (JobStats::Failures { failing_days: a }, JobStats::Failures { failing_days: b }) => {
                let expected = i64::from(*a) + days_between;
                let got = i64::from(*b);
                if got != expected {
                    let kind = if got < expected { ViolationKind::Reset } else { ViolationKind::Jumped };
                    violations.push(IntegrityViolation { job: e.job.clone(), prior: *a, now: *b, expected, kind });
                }
            }
            (JobStats::Flakes(a), JobStats::Flakes(b)) => {
                let delta = b.consistency - a.consistency;
                // Consistency has three decimals; compare in thousandths to avoid float noise.
                let milli = (delta * 1000.0).round() as i64;
                let limit = (threshold * 1000.0).round() as i64;
                if milli.abs() > limit {
                    let m = ConsistencyMove {
                        job: e.job.clone(),
                        prior: a.consistency,
                        now: b.consistency,
                        delta: milli as f64 / 1000.0,
                    };
                    if milli < 0 {
                        worsened.push(m);
                    } else {
                        improved.push(m);
                    }
                }
            }
            _ => {}
        }
    }
    if matches!(now.meta.dataset, citriage_model::Dataset::Failures) {
        integrity = Some(Integrity { common, consistent: common - violations.len(), violations });
    }
    worsened.sort_by(|a, b| a.delta.total_cmp(&b.delta).then_with(|| a.job.cmp(&b.job)));
    improved.sort_by(|a, b| b.delta.total_cmp(&a.delta).then_with(|| a.job.cmp(&b.job)));
    Drift {
        prior_date: prior.meta.date,
        now_date: now.meta.date,
        prior_source: prior.meta.source.clone(),
        days_between,
        added,
        removed,
        reappeared,
        integrity,
        worsened,
        improved,
        threshold,
    }
}
