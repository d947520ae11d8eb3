//! Stage 8: the result. Each failed job gets its modes (with their root cause
//! and class), the gaps are sorted and deduplicated, and everything found
//! becomes a [`PayloadAnalysis`].

use citriage_model::time;

use super::candidates::Candidates;
use super::chain::{ChainView, Changelogs};
use super::decision::Decided;
use super::failure_modes::FailureModes;
use super::job_history::JobHistory;
use super::options::{release_url, Target};
use super::root_causes::{BroaderContext, RootCauses};
use crate::release::JobCounts;
use crate::result::{FailedJob, FailureMode, PayloadAnalysis, PayloadMeta, Suspect, FORMAT_VERSION};
use crate::scoring::CandidateScore;

/// The output of every stage.
pub(crate) struct Parts {
    pub target: Target,
    /// The source's description.
    pub source: String,
    pub chain: ChainView,
    pub changelogs: Changelogs,
    pub history: JobHistory,
    pub failures: FailureModes,
    pub roots: RootCauses,
    pub context: BroaderContext,
    pub candidates: Candidates,
    pub scores: Vec<CandidateScore>,
    pub suspects: Vec<Suspect>,
    pub decision: Decided,
    pub gaps: Vec<String>,
}

/// Assembles the result.
pub(crate) fn assemble(parts: Parts) -> PayloadAnalysis {
    let Parts {
        target,
        source,
        chain,
        changelogs,
        history,
        failures,
        roots,
        context,
        candidates,
        scores,
        suspects,
        decision,
        mut gaps,
    } = parts;
    let failed_jobs: Vec<FailedJob> =
        failures.failed_jobs.iter().map(|job| with_modes(job, &failures, &roots)).collect();
    gaps.sort();
    gaps.dedup();
    PayloadAnalysis {
        format_version: FORMAT_VERSION,
        payload: PayloadMeta {
            release_url: release_url(&target.pages_base, &target.stream, &target.tag),
            tag: target.tag,
            stream_name: target.stream,
            version: target.version,
            stream: target.parts.as_ref().map(|p| p.stream.clone()).unwrap_or_default(),
            architecture: target.architecture,
            phase: chain.target.phase.clone(),
            created: target.created.map(time::rfc3339),
            as_of: target.as_of.map(time::rfc3339),
            source,
        },
        blocking: chain.target.blocking_counts(),
        informing: JobCounts::of(chain.target.results.informing.values()),
        history: chain.chain.rows.clone(),
        baseline: chain.chain.baseline.clone(),
        chain_complete: !chain.chain.truncated,
        last_accepted: chain.last_accepted,
        hours_since_baseline: chain.hours_since_baseline,
        new_prs: changelogs.new_prs,
        cumulative_prs: changelogs.cumulative_prs,
        window: history.window,
        failed_jobs,
        pending_jobs: failures.pending_jobs,
        root_causes: roots.list,
        candidates: candidates.all.into_values().collect(),
        scores,
        suspects,
        informing_failures: context.informing_failures,
        passed_on_retry: context.passed_on_retry,
        decision: decision.decision,
        recommendations: decision.recommendations,
        data_gaps: gaps,
    }
}

/// A failed job with its modes, each with its root cause and that root cause's class.
fn with_modes(job: &FailedJob, failures: &FailureModes, roots: &RootCauses) -> FailedJob {
    let modes = failures.modes_by_job[&job.name]
        .iter()
        .enumerate()
        .map(|(i, mode)| {
            let key = (job.name.clone(), i);
            let draft = &mode.draft;
            let root = roots.of_mode[&key].clone();
            let class = roots
                .list
                .iter()
                .find(|r| r.id == root)
                .map(|r| r.class.clone())
                .unwrap_or_else(|| roots.mode_class[&key].clone());
            FailureMode {
                signature: draft.sig.clone(),
                summary: draft.summary.clone(),
                tests: draft.tests.clone(),
                lines: draft.lines.iter().take(12).cloned().collect(),
                class,
                in_ci_step: draft.in_ci_step,
                failed_step: draft.failed_step.clone(),
                first_failed_in: mode.onset.first.clone(),
                payloads_failing: mode.onset.count,
                before: mode.onset.before.clone(),
                root_cause: root,
                onset_assumed_on: mode.onset.assumed.clone(),
                step_refs: draft.step_refs.clone(),
            }
        })
        .collect();
    FailedJob { modes, ..job.clone() }
}
