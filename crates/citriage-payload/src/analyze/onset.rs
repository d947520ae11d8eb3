//! Where a failure began: the walk back along the chain while a job keeps
//! failing the same way, and the scan beyond the onset for the same failure
//! with a pass in between (intermittent: flake evidence).

use super::reader::RunReader;
use crate::evidence::{LogLine, RunEvidence};
use crate::history::Chain;
use crate::modes::Draft;
use crate::release::{JobResult, JobState, ReleaseInfo};
use crate::result::OnsetBefore;

/// Decides whether an older run shows the same failure (`None`: cannot tell).
pub(crate) type SameFailure<'a> = &'a dyn Fn(&[Draft], Option<&RunEvidence>) -> Option<bool>;

/// Where a failure mode began.
#[derive(Debug, Clone)]
pub(crate) struct Onset {
    /// The oldest consecutive payload with the same failure.
    pub first: String,
    /// Consecutive payloads failing, target included.
    pub count: u32,
    pub before: OnsetBefore,
    /// Payloads where the same failure was assumed from the job's state alone.
    pub assumed: Vec<String>,
}

/// The result of a job in a release info, whatever its lifecycle.
pub(crate) fn job_in<'a>(info: &'a ReleaseInfo, job: &str) -> Option<&'a JobResult> {
    info.results
        .blocking
        .get(job)
        .or_else(|| info.results.informing.get(job))
        .or_else(|| info.results.async_jobs.get(job))
}

/// Walks the chain older than the target while the job keeps failing the same
/// way. A failed run that cannot be compared (no evidence, or the target's own
/// failure is unknown) is taken as the same failure: the job kept failing.
pub(crate) fn walk(reader: &RunReader, chain: &Chain, job: &str, same: SameFailure) -> Onset {
    let tags = chain.tags();
    let mut onset = Onset { first: tags[0].clone(), count: 1, before: OnsetBefore::ChainEnd, assumed: Vec::new() };
    for tag in tags.iter().skip(1) {
        let Some(info) = chain.infos.get(tag) else {
            onset.before = OnsetBefore::Unknown(tag.clone(), "release info not available".into());
            return onset;
        };
        let Some(result) = job_in(info, job) else {
            onset.before = OnsetBefore::Unknown(tag.clone(), "the job did not run on that payload".into());
            return onset;
        };
        match result.state {
            JobState::Succeeded => {
                onset.before = OnsetBefore::Passed(tag.clone());
                return onset;
            }
            JobState::Failed => {
                let modes = result.url.as_deref().and_then(|u| reader.modes(u, job));
                let evidence = result.url.as_deref().and_then(|u| reader.evidence(u));
                let verdict = match &modes {
                    Some(m) if m.iter().all(|d| d.no_evidence) => None,
                    Some(m) => same(m, evidence.as_ref()),
                    None => None,
                };
                match verdict {
                    Some(true) => {}
                    Some(false) => {
                        let other =
                            modes.as_ref().and_then(|m| m.first()).map(|m| m.sig.id.clone()).unwrap_or_default();
                        onset.before = OnsetBefore::DifferentFailure(tag.clone(), other);
                        return onset;
                    }
                    None => onset.assumed.push(tag.clone()),
                }
                onset.first = tag.clone();
                onset.count += 1;
            }
            _ => {
                onset.before = OnsetBefore::Unknown(tag.clone(), "no final result on that payload".into());
                return onset;
            }
        }
    }
    onset
}

/// After the onset boundary, the same failure again on an older payload of the
/// chain with a pass in between: intermittent, i.e. flake evidence.
pub(crate) fn flake_scan(
    reader: &RunReader,
    chain: &Chain,
    job: &str,
    signature: &str,
    onset: &str,
) -> Option<(String, Option<LogLine>)> {
    let tags = chain.tags();
    let start = tags.iter().position(|t| t == onset)? + 1;
    let mut passed_between: Option<String> = None;
    for tag in tags.iter().skip(start) {
        let info = chain.infos.get(tag)?;
        let result = job_in(info, job)?;
        match result.state {
            JobState::Succeeded => {
                passed_between.get_or_insert(tag.clone());
            }
            JobState::Failed => {
                let passed = passed_between.clone()?;
                let url = result.url.as_deref()?;
                let modes = reader.modes(url, job)?;
                if let Some(m) = modes.iter().find(|m| m.sig.id == signature && !m.no_evidence) {
                    return Some((
                        format!(
                            "intermittent: the same failure occurred on {tag} and the job passed on {passed} in between"
                        ),
                        m.lines.first().cloned(),
                    ));
                }
            }
            _ => {}
        }
    }
    None
}
