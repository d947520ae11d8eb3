//! Stage 6: suspects. Every (failed job, failure mode, candidate of the mode's
//! window) is correlated and scored with the rubric; a "flake" that a
//! candidate's diff carries verbatim and that is new in its payload is a
//! regression after all; then each root cause's candidates are ranked by their
//! best score and given an action.

use std::collections::{BTreeMap, BTreeSet};

use citriage_model::time::{self, Epoch, DAY};

use super::candidates::Candidates;
use super::chain::ChainView;
use super::failure_modes::{variant_applies, FailureModes, ModeOnset};
use super::onset::job_in;
use super::options::Target;
use super::reader::RunReader;
use super::root_causes::{ModeKey, RootCauses};
use crate::action::{self, Band, CandidateAction};
use crate::candidate::{Candidate, CandidateKind};
use crate::classify::{Classification, FailureClass};
use crate::links::{self, ModeEvidence};
use crate::result::{OnsetBefore, RootCause, Suspect};
use crate::scoring::{self, CandidateScore, Correlation, CorrelationResult, ScoreContext, Signal};
use citriage_suspects::window::CandidateIndex;

/// A mode's candidate window: the payloads whose PRs are candidates and the
/// times CI-configuration changes must have landed in.
struct ModeWindow {
    /// The onset payload when established, else every payload from it back to the baseline.
    payloads: Vec<String>,
    /// CI-configuration changes count when they landed in (lo, hi].
    lo: Option<Epoch>,
    hi: Option<Epoch>,
    /// CI changes landing in (onset_lo, hi] get the onset points.
    onset_lo: Option<Epoch>,
}

/// One correlated (job, mode, candidate).
struct Correlated {
    mode: ModeKey,
    candidate: String,
    correlation: CorrelationResult,
    /// Why the failure began with this candidate, when it did (and a link exists).
    onset_here: Option<String>,
    payload: String,
}

/// Correlates and scores every mode with every candidate of its window.
pub(crate) fn score_all(
    reader: &RunReader,
    target: &Target,
    view: &ChainView,
    failures: &FailureModes,
    roots: &RootCauses,
    candidates: &Candidates,
) -> Vec<CandidateScore> {
    let mut correlated: Vec<Correlated> = Vec::new();
    for (job, modes) in &failures.modes_by_job {
        for (i, mode) in modes.iter().enumerate() {
            correlated.extend(correlate_mode(reader, target, view, failures, candidates, (job.clone(), i), mode));
        }
    }
    let mut linked_per_mode: BTreeMap<&ModeKey, usize> = BTreeMap::new();
    for c in correlated.iter().filter(|c| !c.correlation.links.is_empty()) {
        *linked_per_mode.entry(&c.mode).or_default() += 1;
    }
    correlated.iter().map(|c| score_one(c, &correlated, &linked_per_mode, failures, roots, candidates)).collect()
}

/// The window of a mode: its candidate payloads and CI-configuration times.
fn mode_window(
    reader: &RunReader,
    target: &Target,
    view: &ChainView,
    candidates: &Candidates,
    job: &str,
    mode: &ModeOnset,
) -> ModeWindow {
    let first = &mode.onset.first;
    let established = mode.onset.before.established();
    let index = view.tags.iter().position(|t| t == first).unwrap_or(0);
    // Every payload from the onset back to the last all-green one: a change
    // that came later cannot have started the failure.
    let payloads: Vec<String> =
        view.tags.iter().skip(index).filter(|t| Some(*t) != view.chain.baseline.as_ref()).cloned().collect();
    // The failing run's start bounds the CI window: the step registry is read then.
    let run = view.chain.infos.get(first).and_then(|i| job_in(i, job));
    let mut bound = run.and_then(|j| j.transition_epoch());
    let urls: Vec<&String> =
        run.map(|j| j.previous_attempt_urls.iter().chain(j.url.iter()).collect()).unwrap_or_default();
    for url in urls {
        if let Some(t) = reader.evidence(url).and_then(|e| e.started.or(e.finished)) {
            bound = Some(bound.map_or(t, |b| b.min(t)));
        }
    }
    let onset_time = time::tag_timestamp(first);
    let hi = [bound, onset_time.map(|t| t + DAY), target.as_of].into_iter().flatten().min();
    let before = match &mode.onset.before {
        OnsetBefore::Passed(t) | OnsetBefore::DifferentFailure(t, _) => time::tag_timestamp(t),
        _ => None,
    };
    let lo = if established { before } else { candidates.window_lo };
    ModeWindow { payloads, lo, hi, onset_lo: if established { before } else { None } }
}

/// The failure side of a mode, for correlation.
fn mode_evidence(failures: &FailureModes, job: &str, mode: &ModeOnset) -> ModeEvidence {
    let draft = &mode.draft;
    let mut evidence =
        ModeEvidence::new(draft.lines.clone(), draft.tests.clone(), draft.binaries.clone(), draft.test_binary);
    evidence.step_refs = draft.step_refs.clone();
    evidence.ci_paths = draft.ci_paths.clone();
    evidence.failed_step = draft.failed_step.clone();
    evidence.prow_job = failures.job(job).and_then(|f| f.prow_job.clone()).unwrap_or_default();
    evidence
}

/// The candidates of a mode's window: the PRs of its payloads (RPM changes of
/// the RHCOS the job boots), and the CI-configuration changes of its times.
fn window_candidates<'c>(
    failures: &FailureModes,
    candidates: &'c Candidates,
    job: &str,
    window: &ModeWindow,
) -> Vec<&'c Candidate> {
    let failed = failures.job(job);
    let mut out: Vec<&Candidate> = Vec::new();
    for payload in &window.payloads {
        for c in candidates.by_payload.get(payload).into_iter().flatten() {
            if c.kind == CandidateKind::RhcosRpm
                && !failed.is_some_and(|f| c.rpm.as_ref().is_some_and(|r| variant_applies(&f.rhcos, &r.variant_tag)))
            {
                continue;
            }
            if let Some(c) = candidates.all.get(&c.id) {
                out.push(c);
            }
        }
    }
    for c in candidates.all.values().filter(|c| c.kind == CandidateKind::CiConfig) {
        let t = c.date.as_deref().and_then(time::parse_rfc3339);
        if t.is_some_and(|t| window.lo.is_none_or(|lo| t > lo) && window.hi.is_none_or(|hi| t <= hi)) {
            out.push(c);
        }
    }
    out
}

/// Correlates one mode with every candidate of its window.
fn correlate_mode(
    reader: &RunReader,
    target: &Target,
    view: &ChainView,
    failures: &FailureModes,
    candidates: &Candidates,
    key: ModeKey,
    mode: &ModeOnset,
) -> Vec<Correlated> {
    let window = mode_window(reader, target, view, candidates, &key.0, mode);
    let evidence = mode_evidence(failures, &key.0, mode);
    let empty = CandidateIndex::default();
    let first = &mode.onset.first;
    window_candidates(failures, candidates, &key.0, &window)
        .into_iter()
        .map(|c| {
            let index = candidates.index.docs.get(&c.id).unwrap_or(&empty);
            let correlation = links::correlate(&evidence, c, index, &candidates.index);
            let onset_here = if mode.onset.before.established() && !correlation.links.is_empty() {
                onset_here(c, mode, &window)
            } else {
                None
            };
            Correlated {
                mode: key.clone(),
                candidate: c.id.clone(),
                correlation,
                onset_here,
                payload: c.payload.clone().unwrap_or_else(|| first.clone()),
            }
        })
        .collect()
}

/// Why the mode began with this candidate, when it did: a CI change landed
/// between the last good run and the onset, or the onset payload contains the PR.
fn onset_here(c: &Candidate, mode: &ModeOnset, window: &ModeWindow) -> Option<String> {
    let first = &mode.onset.first;
    match c.kind {
        CandidateKind::CiConfig => {
            let t = c.date.as_deref().and_then(time::parse_rfc3339);
            t.filter(|t| window.onset_lo.is_some_and(|lo| *t > lo)).map(|_| {
                format!(
                    "the failure began in {first} ({}); the change landed {} in between",
                    mode.onset.before.describe(),
                    c.date.as_deref().map(time::shown).unwrap_or_default()
                )
            })
        }
        _ if c.payload.as_deref() == Some(first.as_str()) => Some(format!(
            "first failed in {first}, the payload that contains it; {}{}",
            mode.onset.before.describe(),
            if mode.onset.assumed.is_empty() {
                String::new()
            } else {
                format!(
                    " (the same failure assumed on {} from the job's state: no evidence there)",
                    mode.onset.assumed.join(", ")
                )
            }
        )),
        _ => None,
    }
}

/// Scores one correlated tuple with its context.
fn score_one(
    c: &Correlated,
    all: &[Correlated],
    linked_per_mode: &BTreeMap<&ModeKey, usize>,
    failures: &FailureModes,
    roots: &RootCauses,
    candidates: &Candidates,
) -> CandidateScore {
    let (job, index) = (&c.mode.0, c.mode.1);
    let root = &roots.of_mode[&c.mode];
    let mut other_jobs: Vec<String> = all
        .iter()
        .filter(|o| {
            o.mode.0 != *job
                && o.candidate == c.candidate
                && o.correlation.level() >= Correlation::CodePath
                && roots.of_mode[&o.mode] == *root
        })
        .map(|o| o.mode.0.clone())
        .collect();
    other_jobs.sort();
    other_jobs.dedup();
    let prow_job = failures.job(job).and_then(|f| f.prow_job.clone()).unwrap_or_else(|| job.clone());
    let candidate = &candidates.all[&c.candidate];
    let gap = if c.correlation.links.is_empty() {
        None
    } else {
        candidate.presubmits.as_ref().and_then(|p| scoring::presubmit_gap(&prow_job, p))
    };
    let mode = failures.mode(job, index);
    let context = ScoreContext {
        job,
        mode: &mode.draft.sig.id,
        root_cause: root,
        class: roots.mode_class[&c.mode].class,
        onset_here: c.onset_here.clone(),
        sole_linked: !c.correlation.links.is_empty() && linked_per_mode.get(&c.mode).copied().unwrap_or(0) == 1,
        payload: &c.payload,
        other_jobs,
        presubmit_gap: gap,
        in_ci_step: mode.draft.in_ci_step,
    };
    scoring::score(&context, candidate, &c.correlation)
}

/// A "flake" with a specific verbatim, new-in-this-payload match is a
/// regression after all; the scores come back sorted by root cause, job, mode,
/// score (highest first) and candidate.
pub(crate) fn reclassify_flakes(mut scores: Vec<CandidateScore>, roots: &mut [RootCause]) -> Vec<CandidateScore> {
    let mut reclassified: BTreeSet<String> = BTreeSet::new();
    for s in &scores {
        let Some(root) = roots.iter().find(|r| r.id == s.root_cause) else { continue };
        if root.class.class == FailureClass::Flake
            && s.error_match.as_ref().is_some_and(|m| m.df == 1)
            && s.items.iter().any(|i| i.signal == Signal::NewFailureMode)
        {
            reclassified.insert(root.id.clone());
        }
    }
    for r in roots.iter_mut().filter(|r| reclassified.contains(&r.id)) {
        r.class = Classification {
            class: FailureClass::ProductRegression,
            reason: format!("looked intermittent ({}), but a candidate's diff carries the failure verbatim and the failure is new in its payload", r.class.reason),
            evidence: r.class.evidence.clone(),
            temporary: false,
        };
    }
    scores.sort_by(|a, b| {
        (&a.root_cause, &a.job, &a.mode, std::cmp::Reverse(a.total), &a.candidate).cmp(&(
            &b.root_cause,
            &b.job,
            &b.mode,
            std::cmp::Reverse(b.total),
            &b.candidate,
        ))
    });
    scores
}

/// Each root cause's suspects: its candidates' best scores ranked, each with
/// its action; a root cause without one says why.
pub(crate) fn rank(
    roots: &mut [RootCause],
    scores: &[CandidateScore],
    candidates: &BTreeMap<String, Candidate>,
    baseline: Option<&str>,
) -> Vec<Suspect> {
    let mut suspects: Vec<Suspect> = Vec::new();
    for root in roots.iter() {
        suspects.extend(rank_root_cause(root, scores, candidates));
    }
    for root in roots.iter_mut() {
        if !suspects.iter().any(|s| s.root_cause == root.id) {
            root.no_candidate_reason = Some(no_candidate_reason(root, scores, baseline));
        }
    }
    suspects
}

/// The suspects of one root cause.
fn rank_root_cause(
    root: &RootCause,
    scores: &[CandidateScore],
    candidates: &BTreeMap<String, Candidate>,
) -> Vec<Suspect> {
    let mut best: BTreeMap<String, (CandidateScore, BTreeSet<String>)> = BTreeMap::new();
    for s in scores.iter().filter(|s| s.root_cause == root.id && s.total > 0) {
        let entry = best.entry(s.candidate.clone()).or_insert_with(|| (s.clone(), BTreeSet::new()));
        entry.1.insert(s.job.clone());
        if (s.total, s.correlation) > (entry.0.total, entry.0.correlation) {
            entry.0 = s.clone();
        }
    }
    let mut ranked: Vec<(CandidateScore, BTreeSet<String>)> = best.into_values().collect();
    ranked.sort_by(|a, b| {
        b.0.total.cmp(&a.0.total).then(b.0.correlation.cmp(&a.0.correlation)).then(a.0.candidate.cmp(&b.0.candidate))
    });
    let mut revert_found = false;
    let mut out = Vec::new();
    for (rank, (score, jobs)) in ranked.into_iter().enumerate() {
        let candidate = &candidates[&score.candidate];
        let (mut action, mut reason) =
            action::candidate_action(score.total, candidate, root.class.class, root.kubelet_skew);
        if let (Some(cap), CandidateAction::ReportOnly | CandidateAction::Bisect) = (&score.cap, action) {
            reason = format!("{reason}; {cap}");
        }
        if action == CandidateAction::StageRevert {
            revert_found = true;
        } else if action == CandidateAction::Bisect && revert_found {
            action = CandidateAction::ReportOnly;
            reason = format!(
                "score {}, but a revert candidate with a specific verbatim match already explains {}",
                score.total, root.id
            );
        }
        out.push(Suspect {
            rank: rank as u32 + 1,
            candidate: score.candidate.clone(),
            root_cause: root.id.clone(),
            band: Band::of(score.total),
            jobs: jobs.into_iter().collect(),
            score,
            action,
            action_reason: reason,
        });
    }
    out
}

/// Why a root cause has no suspect.
fn no_candidate_reason(root: &RootCause, scores: &[CandidateScore], baseline: Option<&str>) -> String {
    let n = scores.iter().filter(|s| s.root_cause == root.id).map(|s| &s.candidate).collect::<BTreeSet<_>>().len();
    match root.class.class {
        FailureClass::Infrastructure => format!(
            "infrastructure cause ({}); none of the {n} candidate(s) of the window is implicated",
            root.class.reason
        ),
        FailureClass::Flake => format!("flake ({}); it predates the candidates", root.class.reason),
        FailureClass::Unknown => format!("{}; nothing can be correlated", root.class.reason),
        FailureClass::InformingOnly => "only informing tests failed".to_string(),
        _ if n == 0 => format!(
            "no candidate change since {} (changelog unavailable or empty)",
            baseline.map(str::to_string).unwrap_or_else(|| root.first_failed_in.clone())
        ),
        _ => format!(
            "none of the {n} candidate(s) has an error-message, code-path, title or component link to the failure"
        ),
    }
}
