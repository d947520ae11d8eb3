//! Stage 3: the failed blocking jobs of the target, each split into failure
//! modes with their onsets, per-test onsets, earlier attempts, streak, pass
//! rate and aggregated runs; what is missing of their evidence is a gap.

use std::collections::BTreeMap;

use citriage_model::time;

use super::chain::ChainView;
use super::job_history::JobHistory;
use super::onset::{self, Onset};
use super::options::Target;
use super::reader::RunReader;
use crate::evidence::{JunitState, RunEvidence, TestKind};
use crate::jobhistory::{self, Outcome, Streak};
use crate::modes::Draft;
use crate::release::{JobResult, JobState};
use crate::result::{AggregatedSummary, Attempt, FailedJob, TestOnset};

/// A mode of a failed job with its onset.
pub(crate) struct ModeOnset {
    pub draft: Draft,
    pub onset: Onset,
}

/// The failed blocking jobs and their modes.
pub(crate) struct FailureModes {
    /// In the order of the target's blocking jobs; their `modes` are filled at assembly.
    pub failed_jobs: Vec<FailedJob>,
    /// Job name → its modes, in the job's order.
    pub modes_by_job: BTreeMap<String, Vec<ModeOnset>>,
    /// Blocking jobs without a final result.
    pub pending_jobs: Vec<String>,
}

impl FailureModes {
    /// The mode `index` of `job`.
    pub fn mode(&self, job: &str, index: usize) -> &ModeOnset {
        &self.modes_by_job[job][index]
    }

    /// The failed job of this name.
    pub fn job(&self, name: &str) -> Option<&FailedJob> {
        self.failed_jobs.iter().find(|f| f.name == name)
    }
}

/// Reads every failed blocking job of the target.
pub(crate) fn collect(
    reader: &RunReader,
    target: &Target,
    view: &ChainView,
    history: &JobHistory,
    gaps: &mut Vec<String>,
) -> FailureModes {
    let mut failed_jobs = Vec::new();
    let mut modes_by_job = BTreeMap::new();
    for (name, result) in view.target.results.blocking.iter().filter(|(_, r)| r.state == JobState::Failed) {
        let (job, modes) = failed_job(reader, target, view, history, name, result, gaps);
        failed_jobs.push(job);
        modes_by_job.insert(name.clone(), modes);
    }
    let pending_jobs: Vec<String> = view
        .target
        .results
        .blocking
        .iter()
        .filter(|(_, j)| !matches!(j.state, JobState::Succeeded | JobState::Failed))
        .map(|(k, _)| k.clone())
        .collect();
    let with_evidence =
        modes_by_job.values().filter(|m: &&Vec<ModeOnset>| m.iter().any(|x| !x.draft.no_evidence)).count();
    if !failed_jobs.is_empty() && with_evidence == 0 {
        gaps.push(format!(
            "none of the {} failed blocking job(s) has failure evidence: insufficient evidence for any conclusion",
            failed_jobs.len()
        ));
    }
    FailureModes { failed_jobs, modes_by_job, pending_jobs }
}

/// One failed blocking job: its record and its modes with their onsets.
fn failed_job(
    reader: &RunReader,
    target: &Target,
    view: &ChainView,
    history: &JobHistory,
    name: &str,
    result: &JobResult,
    gaps: &mut Vec<String>,
) -> (FailedJob, Vec<ModeOnset>) {
    let prow_job = result.prow_job();
    let evidence = result.url.as_deref().and_then(|u| reader.evidence(u));
    if evidence.is_none() {
        gaps.push(format!(
            "{name}: no artifacts for {}: insufficient evidence",
            result.url.as_deref().unwrap_or("(no URL)")
        ));
    }
    let drafts = match (result.url.as_deref(), &evidence) {
        (Some(u), Some(_)) => reader.modes(u, name).unwrap_or_default(),
        _ => reader.modes_without_evidence(name),
    };
    let modes = mode_onsets(reader, &view.chain, name, drafts);
    let final_signature = modes.first().map(|m| m.draft.sig.id.clone());
    if let Some(e) = &evidence {
        if let Some(gap) = junit_gap(name, e) {
            gaps.push(gap);
        }
    }
    let (informing_tests, flaky_tests) = match &evidence {
        Some(e) => (
            e.failures.iter().filter(|f| f.kind == TestKind::Informing).map(|f| f.name.clone()).collect(),
            e.failures.iter().filter(|f| f.kind == TestKind::Flake).map(|f| f.name.clone()).collect(),
        ),
        None => (Vec::new(), Vec::new()),
    };
    let job_name = prow_job.as_deref().unwrap_or(name);
    let job = FailedJob {
        name: name.to_string(),
        url: result.url.clone(),
        state: result.state.clone(),
        retries: result.retries,
        previous_attempts: previous_attempts(reader, name, result, final_signature.as_ref()),
        junit: evidence.as_ref().map(|e| e.junit.clone()),
        tests_total: evidence.as_ref().map(|e| e.tests_total).unwrap_or(0),
        tests: evidence.as_ref().map(|e| test_onsets(reader, &view.chain, name, e)).unwrap_or_default(),
        informing_tests,
        flaky_tests,
        modes: Vec::new(),
        streak: streak(view, history, name, prow_job.as_deref()),
        pass_rate: prow_job.as_ref().and_then(|p| history.rates.get(p).cloned()),
        aggregated: evidence.as_ref().and_then(aggregated_summary),
        platform: platform_of(job_name),
        rhcos: rhcos_variant(job_name, &target.version),
        prow_job,
    };
    (job, modes)
}

/// Each draft with its onset: by signature, or (without evidence) by the job's state alone.
fn mode_onsets(reader: &RunReader, chain: &crate::history::Chain, job: &str, drafts: Vec<Draft>) -> Vec<ModeOnset> {
    drafts
        .into_iter()
        .map(|draft| {
            let signature = draft.sig.id.clone();
            let onset = if draft.no_evidence {
                onset::walk(reader, chain, job, &|_, _| None)
            } else {
                onset::walk(reader, chain, job, &|modes: &[Draft], _| Some(modes.iter().any(|m| m.sig.id == signature)))
            };
            ModeOnset { draft, onset }
        })
        .collect()
}

/// When each gating test of the run first failed along the chain.
fn test_onsets(reader: &RunReader, chain: &crate::history::Chain, job: &str, evidence: &RunEvidence) -> Vec<TestOnset> {
    let mut tests = Vec::new();
    for failure in evidence.gating().filter(|f| !f.is_step) {
        let test = failure.name.clone();
        let onset = onset::walk(reader, chain, job, &|_, older: Option<&RunEvidence>| {
            older.filter(|e| e.junit.readable()).map(|e| e.gating().any(|g| g.name == test))
        });
        tests.push(TestOnset {
            name: failure.name.clone(),
            message: failure.message.clone(),
            at: failure.at.clone(),
            first_failed_in: onset.first,
            payloads_failing: onset.count,
            onset_certain: onset.before.established() && onset.assumed.is_empty(),
        });
    }
    tests
}

/// The earlier attempts of the job on the target, with their first signature.
fn previous_attempts(
    reader: &RunReader,
    job: &str,
    result: &JobResult,
    final_signature: Option<&String>,
) -> Vec<Attempt> {
    result
        .previous_attempt_urls
        .iter()
        .map(|url| {
            let modes = reader.modes(url, job);
            let signature = modes.as_ref().and_then(|m| m.first()).filter(|d| !d.no_evidence).map(|d| d.sig.clone());
            Attempt {
                url: url.clone(),
                same_failure: signature.as_ref().map(|s| Some(&s.id) == final_signature),
                signature,
            }
        })
        .collect()
}

/// The job's streak over the chain, then over its history beyond it.
fn streak(view: &ChainView, history: &JobHistory, job: &str, prow_job: Option<&str>) -> Streak {
    let mut outcomes: Vec<(String, Outcome)> = view
        .chain
        .rows
        .iter()
        .map(|r| {
            let outcome =
                view.chain.infos.get(&r.tag).and_then(|i| i.results.blocking.get(job)).map(|j| match j.state {
                    JobState::Succeeded => Outcome::S,
                    JobState::Failed => Outcome::F,
                    _ => Outcome::Unknown,
                });
            (r.tag.clone(), outcome.unwrap_or(Outcome::Unknown))
        })
        .collect();
    if let Some(pj) = prow_job {
        let oldest_time = view.tags.last().and_then(|t| time::tag_timestamp(t));
        for (t, o) in jobhistory::outcomes_by_payload(&history.runs, pj) {
            if !outcomes.iter().any(|(x, _)| *x == t) && time::tag_timestamp(&t) < oldest_time && outcomes.len() < 30 {
                outcomes.push((t, o));
            }
        }
    }
    Streak::from_outcomes(&outcomes)
}

/// An aggregated job's underlying jobs and failed tests.
fn aggregated_summary(evidence: &RunEvidence) -> Option<AggregatedSummary> {
    if evidence.aggregated.is_empty() {
        return None;
    }
    Some(AggregatedSummary {
        underlying_jobs: crate::aggregated::underlying_jobs(&evidence.aggregated).into_iter().collect(),
        failed_tests: evidence.aggregated.iter().filter(|a| a.failed).cloned().collect(),
        tests_total: evidence.aggregated.len() as u32,
    })
}

/// What is wrong with the run's JUnit, as a gap.
fn junit_gap(job: &str, evidence: &RunEvidence) -> Option<String> {
    let problem = match &evidence.junit {
        JunitState::Missing => "JUnit missing: the job's tests may never have run (unknown, not green)".to_string(),
        JunitState::Unparseable { problems } => format!("JUnit unparseable: {}", problems.join("; ")),
        JunitState::Empty { .. } => "JUnit export (results.json) is empty: nothing is known of the tests".to_string(),
        _ => return None,
    };
    let log = if evidence.log_lines.is_empty() && evidence.context.is_empty() { "; no build log" } else { "" };
    Some(format!("{job}: {problem}{log}"))
}

const PLATFORMS: &[&str] = &[
    "aws",
    "gcp",
    "azure",
    "metal",
    "vsphere",
    "openstack",
    "ibmcloud",
    "nutanix",
    "ovirt",
    "powervs",
    "alibaba",
    "libvirt",
    "kubevirt",
];

/// The platform word of a job name.
pub fn platform_of(job: &str) -> Option<String> {
    let lower = job.to_ascii_lowercase();
    let words: Vec<&str> = lower.split(['-', '_', '.']).collect();
    PLATFORMS.iter().find(|p| words.contains(p)).map(|p| p.to_string())
}

/// The RHCOS variant a job runs, from its name and the OCP version.
pub fn rhcos_variant(job: &str, version: &str) -> String {
    if job.contains("rhcos9_10") {
        return "rhcos9_10".into();
    }
    if job.contains("rhcos10") {
        return "rhcos10".into();
    }
    if job.contains("rhcos9") {
        return "rhcos9".into();
    }
    let major: u32 = version.split('.').next().and_then(|m| m.parse().ok()).unwrap_or(4);
    let install_major = if job.contains("upgrade") && job.contains("major") && major >= 5 { major - 1 } else { major };
    if install_major >= 5 {
        "rhcos10-default".into()
    } else {
        "rhcos9-default".into()
    }
}

/// True when an RHCOS stream tag is the one a job of this variant boots.
pub(crate) fn variant_applies(job_variant: &str, stream_tag: &str) -> bool {
    let ten = stream_tag.contains("coreos-10");
    match job_variant {
        "rhcos9_10" => true,
        "rhcos10" | "rhcos10-default" => ten,
        _ => !ten,
    }
}
