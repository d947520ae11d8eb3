//! What a world is generated from ([`SynthParams`], with its presets) and what was
//! generated ([`Summary`]).

use crate::out::SynthError;
use citriage_model::Day;
use serde::{Deserialize, Serialize};

/// Generation parameters. Every field influences the output; nothing else
/// does (no wall clock, no environment).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SynthParams {
    /// World seed.
    pub seed: u64,
    /// Number of Kubernetes Prow jobs.
    pub jobs: usize,
    /// Mean builds per job over the history.
    pub builds_per_job: usize,
    /// Days of history, ending at `end_date`.
    pub days: u32,
    /// Last day of the world (`YYYY-MM-DD`, UTC); the world ends at 23:59:59.
    pub end_date: String,
    /// Base rate of environment failures in healthy periods (0..1).
    pub failure_rate: f64,
    /// Mean lines per build log.
    pub log_lines: usize,
    /// Mean test cases per build.
    pub tests_per_build: usize,
    /// Consecutive daily dashboard snapshots ending at `end_date`.
    pub dashboard_days: u32,
    /// Hours of builds listed in `prowjobs.js` (Prow keeps recent ProwJobs only).
    pub prowjobs_hours: u32,
    /// OpenShift nightly payloads in the release stream (0 disables it).
    pub payloads: usize,
    /// Worker threads (0 = all cores). Does not change the output.
    pub threads: usize,
    /// Plant the fix stories (`fixes` in the truth): three patterns, an issue and a
    /// fix pull request each; one fix works, one does not, one fixes only master.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fix_stories: bool,
    /// Plant the suspect stories (`truth/suspects.json`): git histories of a tested
    /// repository and of a job-configuration repository under `git/`, and jobs whose
    /// failures a commit of them introduced or exposed (or none did).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub suspect_stories: bool,
    /// Plant the pull-request stories (`truth/prs.json`): PRs that break a test, PRs hit
    /// only by flaky tests, by an ongoing base-branch pattern or by an infrastructure
    /// event, among background PRs of three presubmit jobs of their own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pr_stories: bool,
}

impl Default for SynthParams {
    fn default() -> Self {
        SynthParams::preset("demo").unwrap_or(SynthParams {
            seed: 1,
            jobs: 1,
            builds_per_job: 1,
            days: 45,
            end_date: DEFAULT_END_DATE.to_string(),
            failure_rate: 0.05,
            log_lines: 100,
            tests_per_build: 10,
            dashboard_days: 3,
            prowjobs_hours: 48,
            payloads: 0,
            threads: 0,
            fix_stories: false,
            suspect_stories: false,
            pr_stories: false,
        })
    }
}

/// The default last day of the world.
pub const DEFAULT_END_DATE: &str = "2026-11-21";

/// Names accepted by [`SynthParams::preset`].
pub const PRESETS: &[&str] = &["tiny", "demo", "k8s"];

impl SynthParams {
    /// `tiny` (tests, well under a second in release), `demo` (the README's
    /// first command, seconds), `k8s` (1,500 jobs, ~100k builds, ~1M failed
    /// tests, GBs of logs; benchmarks only).
    pub fn preset(name: &str) -> Option<SynthParams> {
        let base = SynthParams {
            seed: 20_261_121,
            jobs: 0,
            builds_per_job: 0,
            days: 0,
            end_date: DEFAULT_END_DATE.to_string(),
            failure_rate: 0.05,
            log_lines: 0,
            tests_per_build: 0,
            dashboard_days: 0,
            prowjobs_hours: 48,
            payloads: 0,
            threads: 0,
            fix_stories: false,
            suspect_stories: false,
            pr_stories: false,
        };
        match name {
            "tiny" => Some(SynthParams {
                jobs: 28,
                builds_per_job: 12,
                days: 45,
                log_lines: 60,
                tests_per_build: 10,
                dashboard_days: 3,
                payloads: 11,
                ..base
            }),
            "demo" => Some(SynthParams {
                jobs: 150,
                builds_per_job: 24,
                days: 60,
                log_lines: 200,
                tests_per_build: 30,
                dashboard_days: 7,
                payloads: 24,
                ..base
            }),
            "k8s" => Some(SynthParams {
                jobs: 1500,
                builds_per_job: 50,
                days: 90,
                failure_rate: 0.12,
                log_lines: 200,
                tests_per_build: 170,
                dashboard_days: 7,
                payloads: 60,
                ..base
            }),
            _ => None,
        }
    }

    /// Checks the parameters; returns a description of the first problem.
    pub fn validate(&self) -> Result<(), SynthError> {
        let bad = |m: &str| Err(SynthError::Params(m.to_string()));
        match Day::parse(&self.end_date) {
            // Prow's snowflake build ids cover 2011..2100 comfortably.
            Some(d) if Day::from_ymd(2011, 1, 1) <= Some(d) && Some(d) <= Day::from_ymd(2100, 12, 31) => {}
            Some(_) => return bad("end_date must be between 2011-01-01 and 2100-12-31"),
            None => return bad("end_date must be a valid YYYY-MM-DD date"),
        }
        if self.jobs == 0 {
            return bad("jobs must be at least 1");
        }
        if self.builds_per_job == 0 {
            return bad("builds_per_job must be at least 1");
        }
        if self.days < 2 || self.days > 3650 {
            return bad("days must be between 2 and 3650");
        }
        if !(0.0..=1.0).contains(&self.failure_rate) {
            return bad("failure_rate must be within 0..1");
        }
        if self.dashboard_days == 0 || self.dashboard_days > self.days {
            return bad("dashboard_days must be between 1 and days");
        }
        if self.jobs > 100_000
            || self.builds_per_job > 100_000
            || self.log_lines > 100_000
            || self.tests_per_build > 100_000
        {
            return bad("jobs, builds_per_job, log_lines and tests_per_build are limited to 100,000 each");
        }
        if self.payloads > 10_000 {
            return bad("payloads is limited to 10,000");
        }
        if self.pr_stories && self.days < 15 {
            return bad("the pull-request stories need at least 15 days of history");
        }
        if self.fix_stories && self.days < crate::fixes::MIN_DAYS {
            return bad("the fix stories need at least 30 days of history");
        }
        Ok(())
    }
}

/// What was generated (no timings: they are not part of the world).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Summary {
    pub jobs: u64,
    pub builds: u64,
    pub gcs_builds: u64,
    pub success_builds: u64,
    pub failed_builds: u64,
    pub aborted_builds: u64,
    pub error_builds: u64,
    pub pending_builds: u64,
    pub failed_tests: u64,
    pub flaky_tests: u64,
    pub payloads: u64,
    pub payload_job_runs: u64,
    pub pull_request_diffs: u64,
    pub files: u64,
    pub bytes: u64,
    /// A day slice's builds whose folders were written (absent for a whole world).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice_builds: Option<u64>,
}
