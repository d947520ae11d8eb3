//! The result of a payload analysis: plain, serializable data that the reports
//! render and the JSON twin serializes as is. Every collection is ordered
//! deterministically; nothing here depends on the wall clock.

use serde::{Deserialize, Serialize};

use crate::action::{Band, CandidateAction, ForceAccept, Verdict};
use crate::aggregated::AggregatedTest;
use crate::candidate::Candidate;
use crate::classify::Classification;
use crate::evidence::{JunitState, Location, LogLine};
use crate::history::HistoryRow;
use crate::jobhistory::{JobTrend, Streak, WindowSpec};
use crate::release::{JobCounts, JobState, Phase, PullRequest};
use crate::scoring::CandidateScore;
use crate::signature::Signature;

/// Version of the JSON shape.
pub const FORMAT_VERSION: u32 = 1;

/// The analyzed payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PayloadMeta {
    pub tag: String,
    /// Release-controller stream name (`4.22.0-0.nightly`).
    pub stream_name: String,
    /// `4.22`
    pub version: String,
    /// `nightly`, `ci`...
    pub stream: String,
    pub architecture: String,
    pub phase: Phase,
    /// RFC 3339 creation time from the tag.
    pub created: Option<String>,
    /// The release page.
    pub release_url: String,
    /// The cutoff the analysis respected, when given.
    pub as_of: Option<String>,
    /// Where the data came from.
    pub source: String,
}

/// A set of pull requests relative to an older payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrSet {
    /// The payload the set is relative to.
    pub from: Option<String>,
    pub prs: Vec<PullRequest>,
    /// How it was obtained (`?from=` changelog, union of the chain's hops...).
    pub how: String,
    /// Why it may be incomplete ("the changelog is still loading"...).
    pub note: Option<String>,
}

/// An earlier attempt of a failed job on the same payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    pub url: String,
    /// Signature of its first failure mode, when evidence exists.
    pub signature: Option<Signature>,
    /// The same failure as the final attempt.
    pub same_failure: Option<bool>,
}

/// When a failing test (or failure mode) first failed in the chain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestOnset {
    pub name: String,
    pub message: String,
    pub at: Location,
    /// The oldest consecutive payload where it failed.
    pub first_failed_in: String,
    /// Consecutive payloads failing it, target included.
    pub payloads_failing: u32,
    /// The payload before the onset passed the test (false: evidence ran out).
    pub onset_certain: bool,
}

/// What was seen in the payload before a failure mode's first failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum OnsetBefore {
    /// The job passed there.
    Passed(String),
    /// The job failed there with a different failure mode (signature id).
    DifferentFailure(String, String),
    /// Unknown there (no result, no evidence): the onset is a lower bound.
    Unknown(String, String),
    /// The chain ended.
    ChainEnd,
}

impl OnsetBefore {
    /// True when the onset is established (the payload before passed or failed differently).
    pub fn established(&self) -> bool {
        matches!(self, OnsetBefore::Passed(_) | OnsetBefore::DifferentFailure(_, _))
    }

    /// One sentence.
    pub fn describe(&self) -> String {
        match self {
            OnsetBefore::Passed(t) => format!("the job passed in the payload before ({t})"),
            OnsetBefore::DifferentFailure(t, s) => {
                format!("the job failed differently in the payload before ({t}, signature {s})")
            }
            OnsetBefore::Unknown(t, why) => format!("unknown before {t}: {why}"),
            OnsetBefore::ChainEnd => "the chain ends here".to_string(),
        }
    }
}

/// One failure mode of a failed job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailureMode {
    pub signature: Signature,
    /// The representative failure line, verbatim.
    pub summary: String,
    /// Failing tests of the mode.
    pub tests: Vec<String>,
    /// Cited evidence (failure text lines, matching log lines), bounded.
    pub lines: Vec<LogLine>,
    pub class: Classification,
    /// The failure happens in a CI step rather than in a product test.
    pub in_ci_step: bool,
    pub failed_step: Option<String>,
    pub first_failed_in: String,
    pub payloads_failing: u32,
    pub before: OnsetBefore,
    pub root_cause: String,
    /// Payloads where the job failed without evidence and the same failure was
    /// assumed from its state.
    #[serde(default)]
    pub onset_assumed_on: Vec<String>,
    /// Step-registry references of the failing CI step.
    #[serde(default)]
    pub step_refs: Vec<String>,
}

/// Aggregated job: the underlying runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AggregatedSummary {
    pub underlying_jobs: Vec<String>,
    /// The failed aggregated tests with their verdicts and runs.
    pub failed_tests: Vec<AggregatedTest>,
    pub tests_total: u32,
}

/// A failed blocking job of the target payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailedJob {
    /// Short verification name (`aws-ovn-serial-1of2`).
    pub name: String,
    pub prow_job: Option<String>,
    pub url: Option<String>,
    pub state: JobState,
    pub retries: u32,
    pub previous_attempts: Vec<Attempt>,
    /// `None` when no evidence was found at all.
    pub junit: Option<JunitState>,
    pub tests_total: u32,
    pub tests: Vec<TestOnset>,
    pub informing_tests: Vec<String>,
    pub flaky_tests: Vec<String>,
    pub modes: Vec<FailureMode>,
    pub streak: Streak,
    pub pass_rate: Option<JobTrend>,
    pub aggregated: Option<AggregatedSummary>,
    pub platform: Option<String>,
    /// RHCOS variant by job name (`rhcos9-default`...).
    pub rhcos: String,
}

/// The same signature in another job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemicHit {
    pub job: String,
    /// `informing`, `blocking`, `async`.
    pub lifecycle: String,
    pub url: Option<String>,
    pub platform: Option<String>,
    pub line: Option<LogLine>,
}

/// Failed jobs sharing one failure signature.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RootCause {
    /// `RC1`, `RC2`... by number of jobs.
    pub id: String,
    pub signature: Signature,
    /// The representative line, verbatim.
    pub title: String,
    pub class: Classification,
    /// Failed blocking jobs (short names).
    pub jobs: Vec<String>,
    /// One cited line per job.
    pub evidence: Vec<(String, LogLine)>,
    pub first_failed_in: String,
    pub platforms: Vec<String>,
    /// The same signature elsewhere (informing / async jobs).
    pub systemic: Vec<SystemicHit>,
    pub is_systemic: bool,
    pub kubelet_skew: bool,
    /// Why no candidate is linked, when none is.
    pub no_candidate_reason: Option<String>,
    /// CI-configuration paths to look at (failing step, job configuration).
    #[serde(default)]
    pub ci_look_at: Vec<String>,
    /// When several failure signatures share this cause (the same jobs, the
    /// same onset, the same class and message shape: one cause, many symptoms),
    /// each of them with its tests.
    #[serde(default)]
    pub symptoms: Vec<Symptom>,
    /// Why it stands apart from the other root causes (said when there are more
    /// root causes than failed jobs).
    #[serde(default)]
    pub apart: Option<String>,
    /// Suspects tied on the same score and strength of evidence, by rank.
    #[serde(default)]
    pub ties: Vec<SuspectTie>,
}

/// One symptom of a root cause that groups several signatures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Symptom {
    pub signature: Signature,
    /// Its failure line, verbatim.
    pub line: String,
    pub tests: Vec<String>,
    pub jobs: Vec<String>,
}

/// Suspects of one root cause that tie: the same score from equally strong
/// evidence. Their order says nothing; what would separate them is said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuspectTie {
    /// The rank they share.
    pub rank: u32,
    pub score: u32,
    /// Candidate ids, listed by id.
    pub candidates: Vec<String>,
    /// What evidence is missing to separate them.
    pub separate_by: String,
    /// Small enough, and in the bisect band: bisect between them.
    pub bisect_between: bool,
}

/// A candidate's best score for one root cause, ranked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suspect {
    pub rank: u32,
    pub candidate: String,
    pub root_cause: String,
    pub score: CandidateScore,
    /// Jobs of the root cause where this candidate scored > 0.
    pub jobs: Vec<String>,
    pub band: Band,
    pub action: CandidateAction,
    pub action_reason: String,
    /// The other candidates of the root cause with the same rank (a tie).
    #[serde(default)]
    pub tied_with: Vec<String>,
}

/// The decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    pub verdict: Verdict,
    /// One-sentence summary.
    pub summary: String,
    pub force_accept: ForceAccept,
}

/// A recommendation and what backs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recommendation {
    pub text: String,
    pub evidence: Vec<String>,
}

/// A failed informing (or async) job of the target payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InformingFailure {
    pub name: String,
    pub lifecycle: String,
    pub url: Option<String>,
    pub signature: Option<Signature>,
    /// The root cause it shares, when any.
    pub root_cause: Option<String>,
}

/// A blocking job that failed, was retried and passed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetriedJob {
    pub name: String,
    pub url: Option<String>,
    pub retries: u32,
    pub failed_attempts: Vec<Attempt>,
}

/// Everything the analysis found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PayloadAnalysis {
    pub format_version: u32,
    pub payload: PayloadMeta,
    pub blocking: JobCounts,
    pub informing: JobCounts,
    /// Target first, back to the baseline.
    pub history: Vec<HistoryRow>,
    /// The last payload where every blocking job succeeded.
    pub baseline: Option<String>,
    pub chain_complete: bool,
    pub last_accepted: Option<String>,
    pub hours_since_baseline: Option<f64>,
    pub new_prs: PrSet,
    pub cumulative_prs: PrSet,
    pub window: Option<WindowSpec>,
    pub failed_jobs: Vec<FailedJob>,
    pub pending_jobs: Vec<String>,
    pub root_causes: Vec<RootCause>,
    pub candidates: Vec<Candidate>,
    /// Every scored (job, mode, candidate) tuple.
    pub scores: Vec<CandidateScore>,
    /// Best score per (root cause, candidate) with score > 0, ranked.
    pub suspects: Vec<Suspect>,
    pub informing_failures: Vec<InformingFailure>,
    /// Blocking jobs that passed only on a retry (flake evidence), with the
    /// signature of each failed attempt.
    pub passed_on_retry: Vec<RetriedJob>,
    pub decision: Decision,
    pub recommendations: Vec<Recommendation>,
    /// What could not be read or established.
    pub data_gaps: Vec<String>,
}

impl PayloadAnalysis {
    /// The candidate with an id.
    pub fn candidate(&self, id: &str) -> Option<&Candidate> {
        self.candidates.iter().find(|c| c.id == id)
    }

    /// All candidates ordered by their best score anywhere (desc), then by
    /// correlation strength, then id: the overall suspect ranking.
    pub fn ranking(&self) -> Vec<(String, u32)> {
        let mut best: std::collections::BTreeMap<&str, (u32, crate::scoring::Correlation)> =
            std::collections::BTreeMap::new();
        for s in &self.scores {
            let e = best.entry(&s.candidate).or_insert((0, crate::scoring::Correlation::None));
            if (s.total, s.correlation) > *e {
                *e = (s.total, s.correlation);
            }
        }
        let mut v: Vec<(String, u32, crate::scoring::Correlation)> =
            best.into_iter().map(|(k, (t, c))| (k.to_string(), t, c)).collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)).then(a.0.cmp(&b.0)));
        v.into_iter().map(|(k, t, _)| (k, t)).collect()
    }
}
