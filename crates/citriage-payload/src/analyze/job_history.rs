//! Stage 2: the jobs' runs (recorded, else read from the release infos of the
//! chain and older payloads) and their pass rates over the window; Sippy fills
//! in jobs without runs when the analysis is not cut at an as-of time.

use std::collections::BTreeMap;

use citriage_model::time;

use super::chain::ChainView;
use super::options::{AnalyzeOptions, Target};
use crate::error::PayloadError;
use crate::history;
use crate::jobhistory::{self, JobRun, JobTrend, RunState, WindowSpec};
use crate::release::{JobState, ReleaseInfo};
use crate::source::PayloadSource;

/// The job history the analysis rests on.
pub(crate) struct JobHistory {
    pub runs: Vec<JobRun>,
    /// Prow job name → pass rates and trend.
    pub rates: BTreeMap<String, JobTrend>,
    pub window: Option<WindowSpec>,
}

/// Reads the runs and computes the pass rates.
pub(crate) fn read(
    source: &dyn PayloadSource,
    target: &Target,
    view: &ChainView,
    opts: &AnalyzeOptions,
    gaps: &mut Vec<String>,
) -> Result<JobHistory, PayloadError> {
    let recorded = source.job_runs(&target.stream)?;
    let runs_recorded = recorded.is_some();
    let runs: Vec<JobRun> = match recorded {
        Some(r) => jobhistory::filter_as_of(r, target.as_of),
        None => runs_from_releases(source, target, view, opts.history_payloads),
    };
    let anchor = target.as_of.or_else(|| jobhistory::default_anchor(&runs));
    let window = anchor.map(|a| jobhistory::window_spec(a, opts.window_days));
    let mut rates = anchor.map(|a| jobhistory::pass_rates(&runs, a, opts.window_days)).unwrap_or_default();
    if !runs_recorded {
        for t in rates.values_mut() {
            t.source = "release controller".into();
        }
    }
    if target.as_of.is_none() {
        match source.sippy_jobs(&target.version) {
            Ok(Some(jobs)) => {
                for j in jobs {
                    let covered = rates.get(&j.name).is_some_and(|t| t.current.runs > 0);
                    if !covered {
                        rates.insert(j.name.clone(), j.trend());
                    }
                }
            }
            Ok(None) => {}
            Err(e) => gaps.push(format!("Sippy job pass rates: {e}")),
        }
    }
    Ok(JobHistory { runs, rates, window })
}

/// Runs read from the release infos of the chain and of up to `extra` older
/// payloads: each job's result, and its previous attempts as failed runs.
fn runs_from_releases(source: &dyn PayloadSource, target: &Target, view: &ChainView, extra: usize) -> Vec<JobRun> {
    let mut infos: Vec<(String, ReleaseInfo)> = view.chain.infos.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let oldest = view.position + view.chain.rows.len();
    for t in view.all_tags.tags.iter().skip(oldest).take(extra) {
        if let Ok(mut info) = source.release(&target.stream, &t.name) {
            history::apply_as_of(&mut info, target.as_of);
            infos.push((t.name.clone(), info));
        }
    }
    let mut runs = Vec::new();
    for (tag, info) in &infos {
        let started = time::tag_timestamp(tag);
        for result in info.results.blocking.values().chain(info.results.informing.values()) {
            let Some(job) = result.prow_job() else { continue };
            for url in &result.previous_attempt_urls {
                runs.push(JobRun {
                    tag: tag.clone(),
                    job: job.clone(),
                    state: RunState::Failure,
                    url: url.clone(),
                    started,
                    completed: None,
                });
            }
            let state = match result.state {
                JobState::Succeeded => RunState::Success,
                JobState::Failed => RunState::Failure,
                _ => RunState::Pending,
            };
            runs.push(JobRun {
                tag: tag.clone(),
                job,
                state,
                url: result.url.clone().unwrap_or_default(),
                started,
                completed: None,
            });
        }
    }
    runs
}
