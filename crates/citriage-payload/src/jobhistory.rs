//! Job history: pass rates per time window, the trend between two windows,
//! streaks and failure patterns per job across payloads.
//!
//! ## Window definition
//!
//! Reproducing the published figures for the real 52-payload sample
//! (`periodic-ci-openshift-release-main-nightly-4.22-console-aws`: 10/24 = 41.7 %
//! this week vs 8/25 = 32.0 % the week before) fixes these choices:
//!
//! - a run belongs to the window that contains its **start** time
//!   (`prowjob_start`); completion times give 10/23 instead;
//! - the anchor is the `as_of` time when given, else the newest start time among
//!   **all** runs of the input (not per job);
//! - the current window is the half-open interval `(anchor − 7 d, anchor]`, the
//!   previous one `(anchor − 14 d, anchor − 7 d]`;
//! - a pass is a run in state `success`; `failure`, `error` and `aborted` runs
//!   count as runs that did not pass; `pending` / `triggered` runs are not counted;
//! - every run counts, retries included (the sample has 54 driver-toolkit runs over
//!   52 payloads).
//!
//! The trend is the difference in percentage points, current − previous:
//! "improving" at +5 pp or more, "degrading" at −5 pp or less, else "stable";
//! with no previous runs it is "new".
//!
//! ## Streaks
//!
//! Per payload a job's outcome is `S` when any run on that payload succeeded
//! (a successful retry makes the job pass), `F` when all finished runs failed,
//! and `?` when nothing finished. The pattern lists payloads newest first; the
//! streak is the number of leading `F`s and its originating payload the oldest of
//! them.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::PayloadError;
use citriage_model::time::{self, Epoch, DAY};

/// How a Prow run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum RunState {
    Success,
    Failure,
    Error,
    Aborted,
    Pending,
}

impl RunState {
    /// Parses Prow / BigQuery / release-controller spellings.
    pub fn parse(s: &str) -> RunState {
        match s.trim().to_ascii_lowercase().as_str() {
            "success" | "succeeded" | "passed" => RunState::Success,
            "failure" | "failed" => RunState::Failure,
            "error" => RunState::Error,
            "aborted" => RunState::Aborted,
            _ => RunState::Pending,
        }
    }

    /// True for a finished run.
    pub fn finished(self) -> bool {
        self != RunState::Pending
    }
}

/// One Prow run of a job, verifying one payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobRun {
    /// The payload tag the run verified.
    pub tag: String,
    /// The Prow job name.
    pub job: String,
    pub state: RunState,
    pub url: String,
    pub started: Option<Epoch>,
    pub completed: Option<Epoch>,
}

/// Parses the BigQuery export shape (`release_verify_tag`, `prowjob_job_name`,
/// `prowjob_state`, `prowjob_url`, `prowjob_start`, `prowjob_completion`), as an
/// array or as newline-delimited JSON.
pub fn parse_job_runs(bytes: &[u8], origin: &str) -> Result<Vec<JobRun>, PayloadError> {
    let text = std::str::from_utf8(bytes).map_err(|e| PayloadError::invalid(origin, format!("not UTF-8: {e}")))?;
    let t = text.trim();
    crate::release::refuse_inexact_numbers(t.as_bytes(), origin)?;
    let rows: Vec<Value> = if t.starts_with('[') {
        serde_json::from_str(t).map_err(|e| PayloadError::invalid(origin, format!("malformed JSON: {e}")))?
    } else {
        let mut v = Vec::new();
        for (i, line) in t.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            v.push(
                serde_json::from_str(line)
                    .map_err(|e| PayloadError::invalid(origin, format!("line {}: malformed JSON: {e}", i + 1)))?,
            );
        }
        v
    };
    let mut out = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        let o = r.as_object().ok_or_else(|| PayloadError::invalid(origin, format!("row {i}: expected an object")))?;
        let s = |k: &str| o.get(k).and_then(|v| v.as_str()).map(str::to_string);
        let job = s("prowjob_job_name")
            .or_else(|| s("job"))
            .ok_or_else(|| PayloadError::invalid(origin, format!("row {i}: missing prowjob_job_name")))?;
        let tag = s("release_verify_tag").or_else(|| s("tag")).unwrap_or_default();
        let started_raw = s("prowjob_start").or_else(|| s("started"));
        let started =
            match &started_raw {
                Some(x) if !x.is_empty() => Some(time::parse_rfc3339(x).ok_or_else(|| {
                    PayloadError::invalid(origin, format!("row {i}: prowjob_start {x:?} is not a time"))
                })?),
                _ => None,
            };
        let completed = s("prowjob_completion").or_else(|| s("completed")).and_then(|x| time::parse_rfc3339(&x));
        out.push(JobRun {
            tag,
            job,
            state: RunState::parse(&s("prowjob_state").or_else(|| s("state")).unwrap_or_default()),
            url: s("prowjob_url").or_else(|| s("url")).unwrap_or_default(),
            started,
            completed,
        });
    }
    Ok(out)
}

/// Passes over finished runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassRate {
    pub passes: u32,
    pub runs: u32,
}

impl PassRate {
    /// Percentage with one decimal, `None` without runs.
    pub fn percent(&self) -> Option<f64> {
        (self.runs > 0).then(|| (self.passes as f64 * 1000.0 / self.runs as f64).round() / 10.0)
    }

    /// `10/24 = 41.7%` or `no runs`.
    pub fn describe(&self) -> String {
        match self.percent() {
            Some(p) => format!("{}/{} = {p:.1}%", self.passes, self.runs),
            None => "no runs".to_string(),
        }
    }
}

/// Direction of a pass-rate change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Trend {
    Improving,
    Stable,
    Degrading,
    /// No runs in the previous window.
    New,
    /// No runs in the current window.
    NoData,
}

impl Trend {
    pub fn as_str(self) -> &'static str {
        match self {
            Trend::Improving => "improving",
            Trend::Stable => "stable",
            Trend::Degrading => "degrading",
            Trend::New => "new",
            Trend::NoData => "no data",
        }
    }
}

/// The two windows compared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowSpec {
    pub anchor: String,
    pub days: u32,
    pub current_start: String,
    pub previous_start: String,
    /// How the windows were defined, for the report.
    pub definition: String,
}

/// A job's pass rates in the current and previous windows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobTrend {
    pub job: String,
    pub current: PassRate,
    pub previous: PassRate,
    /// Current − previous, percentage points (one decimal).
    pub delta_pp: Option<f64>,
    pub trend: Trend,
    /// Where the runs came from: `job runs`, `release controller`, `sippy`.
    pub source: String,
}

fn trend_of(c: PassRate, p: PassRate) -> (Option<f64>, Trend) {
    let delta = match (c.percent(), p.percent()) {
        (Some(a), Some(b)) => Some(((a - b) * 10.0).round() / 10.0),
        _ => None,
    };
    let trend = match (c.runs, p.runs, delta) {
        (0, _, _) => Trend::NoData,
        (_, 0, _) => Trend::New,
        (_, _, Some(x)) if x >= 5.0 => Trend::Improving,
        (_, _, Some(x)) if x <= -5.0 => Trend::Degrading,
        _ => Trend::Stable,
    };
    (delta, trend)
}

/// A job's figures from Sippy's `/api/jobs` (its own windows: by default the
/// last 7 days against the 7 before).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SippyJob {
    pub name: String,
    pub current_pass_percentage: f64,
    pub current_runs: u32,
    pub previous_pass_percentage: f64,
    pub previous_runs: u32,
}

impl SippyJob {
    /// As a trend; passes are recovered from the percentage and the run count.
    pub fn trend(&self) -> JobTrend {
        let pr = |pct: f64, runs: u32| PassRate {
            passes: ((pct * runs as f64) / 100.0).round().clamp(0.0, runs as f64) as u32,
            runs,
        };
        let c = pr(self.current_pass_percentage, self.current_runs);
        let p = pr(self.previous_pass_percentage, self.previous_runs);
        let (delta_pp, trend) = trend_of(c, p);
        JobTrend { job: self.name.clone(), current: c, previous: p, delta_pp, trend, source: "sippy".into() }
    }
}

/// Parses Sippy's `/api/jobs` answer (an array of jobs).
pub fn parse_sippy_jobs(bytes: &[u8], origin: &str) -> Result<Vec<SippyJob>, PayloadError> {
    let v: Value =
        serde_json::from_slice(bytes).map_err(|e| PayloadError::invalid(origin, format!("malformed JSON: {e}")))?;
    let arr = v.as_array().ok_or_else(|| PayloadError::invalid(origin, "expected an array of jobs"))?;
    let mut out = Vec::new();
    for (i, j) in arr.iter().enumerate() {
        let name = j
            .get("name")
            .and_then(|n| n.as_str())
            .ok_or_else(|| PayloadError::invalid(origin, format!("[{i}]: missing name")))?;
        let f = |k: &str| j.get(k).and_then(|x| x.as_f64()).unwrap_or(0.0);
        let u = |k: &str| j.get(k).and_then(|x| x.as_u64()).unwrap_or(0).min(u32::MAX as u64) as u32;
        out.push(SippyJob {
            name: name.to_string(),
            current_pass_percentage: f("current_pass_percentage"),
            current_runs: u("current_runs"),
            previous_pass_percentage: f("previous_pass_percentage"),
            previous_runs: u("previous_runs"),
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// The anchor when no `as_of` is given: the newest start time of all runs.
pub fn default_anchor(runs: &[JobRun]) -> Option<Epoch> {
    runs.iter().filter_map(|r| r.started).max()
}

/// Window description for an anchor.
pub fn window_spec(anchor: Epoch, days: u32) -> WindowSpec {
    let d = days as i64 * DAY;
    WindowSpec {
        anchor: time::rfc3339(anchor),
        days,
        current_start: time::rfc3339(anchor - d),
        previous_start: time::rfc3339(anchor - 2 * d),
        definition: format!(
            "runs by start time; current window ({}, {}], previous window ({}, {}] (UTC); success = passed, failure/error/aborted = not passed, pending ignored",
            time::date_hm(anchor - d),
            time::date_hm(anchor),
            time::date_hm(anchor - 2 * d),
            time::date_hm(anchor - d)
        ),
    }
}

/// Pass rates per job for the window ending at `anchor` and the one before.
pub fn pass_rates(runs: &[JobRun], anchor: Epoch, days: u32) -> BTreeMap<String, JobTrend> {
    let d = days as i64 * DAY;
    let mut cur: BTreeMap<&str, PassRate> = BTreeMap::new();
    let mut prev: BTreeMap<&str, PassRate> = BTreeMap::new();
    let mut jobs: BTreeSet<&str> = BTreeSet::new();
    for r in runs {
        let Some(t) = r.started else { continue };
        if !r.state.finished() {
            continue;
        }
        let bucket = if t > anchor - d && t <= anchor {
            &mut cur
        } else if t > anchor - 2 * d && t <= anchor - d {
            &mut prev
        } else {
            continue;
        };
        jobs.insert(&r.job);
        let e = bucket.entry(&r.job).or_default();
        e.runs += 1;
        if r.state == RunState::Success {
            e.passes += 1;
        }
    }
    jobs.into_iter()
        .map(|j| {
            let c = cur.get(j).copied().unwrap_or_default();
            let p = prev.get(j).copied().unwrap_or_default();
            let (delta, trend) = trend_of(c, p);
            (
                j.to_string(),
                JobTrend {
                    job: j.to_string(),
                    current: c,
                    previous: p,
                    delta_pp: delta,
                    trend,
                    source: "job runs".into(),
                },
            )
        })
        .collect()
}

/// Outcome of a job on one payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    S,
    F,
    Unknown,
}

impl Outcome {
    pub fn letter(self) -> char {
        match self {
            Outcome::S => 'S',
            Outcome::F => 'F',
            Outcome::Unknown => '?',
        }
    }
}

/// A job's streak over a newest-first payload sequence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Streak {
    /// Consecutive failing payloads counted from the newest.
    pub length: u32,
    /// The oldest payload of that run of failures.
    pub originating: Option<String>,
    /// Outcomes newest first, e.g. `F F S F`.
    pub pattern: String,
    /// The payloads the pattern covers, newest first.
    pub payloads: Vec<String>,
}

impl Streak {
    /// Computes a streak from (payload, outcome) pairs, newest first.
    pub fn from_outcomes(outcomes: &[(String, Outcome)]) -> Streak {
        let length = outcomes.iter().take_while(|(_, o)| *o == Outcome::F).count();
        Streak {
            length: length as u32,
            originating: (length > 0).then(|| outcomes[length - 1].0.clone()),
            pattern: outcomes.iter().map(|(_, o)| o.letter().to_string()).collect::<Vec<_>>().join(" "),
            payloads: outcomes.iter().map(|(t, _)| t.clone()).collect(),
        }
    }
}

/// Per-payload outcomes of one job from run records, newest payload first
/// (payloads ordered by their tag time stamp, then name).
pub fn outcomes_by_payload(runs: &[JobRun], job: &str) -> Vec<(String, Outcome)> {
    let mut by_tag: BTreeMap<&str, (bool, bool)> = BTreeMap::new();
    for r in runs.iter().filter(|r| r.job == job && !r.tag.is_empty()) {
        let e = by_tag.entry(&r.tag).or_default();
        match r.state {
            RunState::Success => e.0 = true,
            RunState::Pending => {}
            _ => e.1 = true,
        }
    }
    let mut tags: Vec<(&str, (bool, bool))> = by_tag.into_iter().collect();
    tags.sort_by(|a, b| {
        let ta = time::tag_timestamp(a.0);
        let tb = time::tag_timestamp(b.0);
        tb.cmp(&ta).then_with(|| b.0.cmp(a.0))
    });
    tags.into_iter()
        .map(|(t, (ok, bad))| {
            let o = if ok {
                Outcome::S
            } else if bad {
                Outcome::F
            } else {
                Outcome::Unknown
            };
            (t.to_string(), o)
        })
        .collect()
}

/// Streaks of every job in the runs.
pub fn streaks(runs: &[JobRun]) -> BTreeMap<String, Streak> {
    let jobs: BTreeSet<&str> = runs.iter().map(|r| r.job.as_str()).collect();
    jobs.into_iter().map(|j| (j.to_string(), Streak::from_outcomes(&outcomes_by_payload(runs, j)))).collect()
}

/// Drops runs that started after `as_of` (and runs with no start time when a cutoff is set).
pub fn filter_as_of(runs: Vec<JobRun>, as_of: Option<Epoch>) -> Vec<JobRun> {
    match as_of {
        None => runs,
        Some(cut) => runs.into_iter().filter(|r| r.started.is_some_and(|t| t <= cut)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(tag: &str, job: &str, state: &str, start: &str) -> JobRun {
        JobRun {
            tag: tag.into(),
            job: job.into(),
            state: RunState::parse(state),
            url: String::new(),
            started: time::parse_rfc3339(start),
            completed: None,
        }
    }

    #[test]
    fn windows_and_trend() {
        let runs = vec![
            run("4.22.0-0.nightly-2026-05-01-000000", "a", "success", "2026-05-01T00:00:00"),
            run("4.22.0-0.nightly-2026-04-30-000000", "a", "failure", "2026-04-30T00:00:00"),
            run("4.22.0-0.nightly-2026-04-20-000000", "a", "success", "2026-04-20T00:00:00"),
            run("4.22.0-0.nightly-2026-04-19-000000", "a", "pending", "2026-04-19T00:00:00"),
        ];
        let anchor = default_anchor(&runs).unwrap();
        let r = pass_rates(&runs, anchor, 7);
        assert_eq!(r["a"].current, PassRate { passes: 1, runs: 2 });
        assert_eq!(r["a"].previous, PassRate { passes: 1, runs: 1 });
        assert_eq!(r["a"].delta_pp, Some(-50.0));
        assert_eq!(r["a"].trend, Trend::Degrading);
        let s = streaks(&runs);
        assert_eq!(s["a"].pattern, "S F S ?");
        assert_eq!(s["a"].length, 0);
    }

    #[test]
    fn sippy_jobs() {
        let j = br#"[{"name":"periodic-x","current_pass_percentage":41.66666,"current_runs":24,"previous_pass_percentage":32.0,"previous_runs":25}]"#;
        let v = parse_sippy_jobs(j, "jobs.json").unwrap();
        let t = v[0].trend();
        assert_eq!((t.current, t.previous), (PassRate { passes: 10, runs: 24 }, PassRate { passes: 8, runs: 25 }));
        assert_eq!((t.trend, t.source.as_str()), (Trend::Improving, "sippy"));
    }

    #[test]
    fn streak_origin() {
        let o = vec![("c".to_string(), Outcome::F), ("b".to_string(), Outcome::F), ("a".to_string(), Outcome::S)];
        let s = Streak::from_outcomes(&o);
        assert_eq!((s.length, s.originating.as_deref(), s.pattern.as_str()), (2, Some("b"), "F F S"));
    }
}
