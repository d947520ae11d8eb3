//! What the rules look at: the store as it stands at one turn, as plain data the caller
//! reads (builds, the latest clustering run's daily counts, the flake signals, stored
//! payload analyses, triage records' transitions). Times are the data's, never the
//! wall clock.

use citriage_model::{Day, Evidence};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// How a finished run ended, for TestGrid's rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunResult {
    Pass,
    /// `FAILURE` or `ERROR`.
    Fail,
    /// Aborted or unknown: neither breaks nor extends a streak.
    Other,
}

impl RunResult {
    /// From a Prow result (`SUCCESS`, `FAILURE`, `ERROR`, `ABORTED`).
    pub fn of_prow(result: Option<&str>) -> RunResult {
        match result {
            Some("SUCCESS") => RunResult::Pass,
            Some("FAILURE") | Some("ERROR") => RunResult::Fail,
            _ => RunResult::Other,
        }
    }
}

/// One finished run of a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    pub build_id: String,
    /// The build's page (Spyglass), which the report verifier can check.
    pub url: String,
    pub started: i64,
    pub result: RunResult,
    /// The ledger item of its result.
    pub evidence: Evidence,
}

/// A job's finished runs, oldest first (periodic and postsubmit jobs: runs of one code
/// stream, where consecutive failures mean something).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobRuns {
    pub job: String,
    /// Canonical owner; empty when unknown.
    pub owner: String,
    pub runs: Vec<Run>,
}

/// Failures of one pattern on one day, job and test (the store's `cluster_daily`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PatternDay {
    pub day: Day,
    pub job: String,
    pub test: String,
    pub failures: u64,
}

/// A failure pattern of the latest clustering run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatternSeries {
    /// The stable id (it follows its failures from run to run).
    pub id: String,
    pub owner: String,
    /// Its representative failure text.
    pub text: String,
    /// When it was first seen (Unix seconds).
    pub first_seen: i64,
    pub daily: Vec<PatternDay>,
    /// Its newest failing runs (to cite), newest first.
    pub recent: Vec<FailingRun>,
}

/// A run where the pattern failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailingRun {
    pub job: String,
    pub test: String,
    pub run: Run,
}

/// A payload's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PayloadPhase {
    Accepted,
    Rejected,
    /// Not decided yet: ignored.
    Pending,
}

/// A payload of a release stream with its verdict (a stored payload analysis).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PayloadOutcome {
    pub stream: String,
    pub tag: String,
    pub created: i64,
    pub phase: PayloadPhase,
    /// The analysis' one-sentence decision.
    pub verdict: String,
    /// Root causes (their representative lines), most jobs first.
    pub root_causes: Vec<String>,
    /// The leading suspect, when the analysis names one (`openshift/x#123`).
    pub suspect: Option<String>,
    pub owner: String,
    /// The release page.
    pub url: String,
    pub evidence: Vec<Evidence>,
}

/// A triage record's state that alerts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecordState {
    FailedAfterFix,
    FixConfirmed,
}

/// A triage record entering a state (from the records' state history).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordTransition {
    /// The record's id.
    pub record: String,
    /// What the record is about (a pattern's stable id, a job, a root cause).
    pub subject: String,
    pub owner: String,
    pub state: RecordState,
    /// When it entered the state (the data's time).
    pub at: i64,
    /// What the record says about it ("the fix kubernetes/kubernetes#1 merged …").
    pub summary: String,
    /// The fix's reference (`kubernetes/kubernetes#123`), when known.
    pub fix: Option<String>,
    /// Builds that show it (a failure after the fix, the clean runs).
    pub runs: Vec<Run>,
    pub evidence: Vec<Evidence>,
}

/// Everything one turn looks at.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observation {
    /// The instant the data describes (the newest stored build's end, or the turn's
    /// cut-off): never the wall clock.
    pub as_of: i64,
    /// The first day the store has data of: a pattern first seen too soon after it is
    /// not called new (it may only be new to the store).
    pub history_start: Option<i64>,
    pub jobs: Vec<JobRuns>,
    pub patterns: Vec<PatternSeries>,
    /// (job, test) pairs the flake signals flag: their failures never make a pattern
    /// alert.
    pub flaky: BTreeSet<(String, String)>,
    pub payloads: Vec<PayloadOutcome>,
    /// Records' transitions; empty until the store keeps triage records.
    pub records: Vec<RecordTransition>,
}
