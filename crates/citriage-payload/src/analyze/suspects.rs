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
use crate::result::{OnsetBefore, RootCause, Suspect, SuspectTie};
use crate::scoring::{self, CandidateScore, Correlation, CorrelationResult, ScoreContext, Signal};
use citriage_suspects::rank::{tie_groups, Standing};
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

/// What the suspects stage reads.
pub(crate) struct Inputs<'a> {
    pub reader: &'a RunReader<'a>,
    pub target: &'a Target,
    pub view: &'a ChainView,
    pub failures: &'a FailureModes,
    pub roots: &'a RootCauses,
    pub candidates: &'a Candidates,
}

/// Correlates and scores every root cause's symptoms in each of its jobs with
/// every candidate of the window of the job's first symptom.
pub(crate) fn score_all(inputs: &Inputs) -> Vec<CandidateScore> {
    let mut correlated: Vec<Correlated> = Vec::new();
    for (job, modes) in &inputs.failures.modes_by_job {
        for (i, mode) in modes.iter().enumerate() {
            let key = (job.clone(), i);
            let Some(siblings) = cause_siblings(inputs.roots, &key) else { continue };
            let evidence = cause_evidence(inputs.failures, job, &siblings);
            correlated.extend(correlate_mode(inputs, key, mode, &evidence));
        }
    }
    let mut linked_per_mode: BTreeMap<&ModeKey, usize> = BTreeMap::new();
    for c in correlated.iter().filter(|c| !c.correlation.links.is_empty()) {
        *linked_per_mode.entry(&c.mode).or_default() += 1;
    }
    correlated.iter().map(|c| score_one(c, &correlated, &linked_per_mode, inputs)).collect()
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

/// A job's modes of the same root cause as `key`, when `key` is the first of
/// them (a root cause is correlated once per job, against all its symptoms there).
fn cause_siblings(roots: &RootCauses, key: &ModeKey) -> Option<Vec<usize>> {
    let root = roots.of_mode.get(key)?;
    let siblings: Vec<usize> = roots.members.get(root)?.iter().filter(|(j, _)| *j == key.0).map(|(_, i)| *i).collect();
    (siblings.iter().min() == Some(&key.1)).then_some(siblings)
}

/// The failure side of a job's modes of one root cause, for correlation: their
/// lines (at most 40, distinct) and failing tests together.
fn cause_evidence(failures: &FailureModes, job: &str, modes: &[usize]) -> ModeEvidence {
    let drafts: Vec<&crate::modes::Draft> = modes.iter().map(|i| &failures.mode(job, *i).draft).collect();
    let first = drafts[0];
    let (lines, tests, binaries) = if drafts.len() == 1 {
        (first.lines.clone(), first.tests.clone(), first.binaries.clone())
    } else {
        let lines = crate::modes::dedup_lines(drafts.iter().flat_map(|d| d.lines.iter().cloned()).collect(), 40);
        let tests = drafts.iter().flat_map(|d| d.tests.iter().cloned()).collect();
        let binaries = drafts.iter().flat_map(|d| d.binaries.iter().cloned()).collect();
        (lines, tests, binaries)
    };
    let mut evidence = ModeEvidence::new(lines, tests, binaries, drafts.iter().any(|d| d.test_binary));
    evidence.step_refs = first.step_refs.clone();
    evidence.ci_paths = first.ci_paths.clone();
    evidence.failed_step = first.failed_step.clone();
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

/// Correlates one mode (with its root cause's other symptoms in the job) with
/// every candidate of its window.
fn correlate_mode(inputs: &Inputs, key: ModeKey, mode: &ModeOnset, evidence: &ModeEvidence) -> Vec<Correlated> {
    let candidates = inputs.candidates;
    let window = mode_window(inputs.reader, inputs.target, inputs.view, candidates, &key.0, mode);
    let empty = CandidateIndex::default();
    let first = &mode.onset.first;
    let weights = &inputs.target.tuning.links;
    window_candidates(inputs.failures, candidates, &key.0, &window)
        .into_iter()
        .map(|c| {
            let index = candidates.index.docs.get(&c.id).unwrap_or(&empty);
            let correlation = links::correlate(evidence, c, index, &candidates.index, weights);
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
    inputs: &Inputs,
) -> CandidateScore {
    let (failures, roots, candidates) = (inputs.failures, inputs.roots, inputs.candidates);
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

/// Each root cause's suspects: its candidates' best scores ranked (ties share
/// a rank), each with its action; a root cause without one says why.
pub(crate) fn rank(
    roots: &mut [RootCause],
    scores: &[CandidateScore],
    candidates: &BTreeMap<String, Candidate>,
    baseline: Option<&str>,
    tie_bisect_max: usize,
) -> Vec<Suspect> {
    let mut suspects: Vec<Suspect> = Vec::new();
    for root in roots.iter_mut() {
        let (ranked, ties) = rank_root_cause(root, scores, candidates, tie_bisect_max);
        root.ties = ties;
        suspects.extend(ranked);
    }
    for root in roots.iter_mut() {
        if !suspects.iter().any(|s| s.root_cause == root.id) {
            root.no_candidate_reason = Some(no_candidate_reason(root, scores, baseline));
        }
    }
    suspects
}

/// Each candidate's best score for the root cause, with the jobs it scored in.
fn best_scores(root: &RootCause, scores: &[CandidateScore]) -> Vec<(CandidateScore, BTreeSet<String>)> {
    let mut best: BTreeMap<String, (CandidateScore, BTreeSet<String>)> = BTreeMap::new();
    for s in scores.iter().filter(|s| s.root_cause == root.id && s.total > 0) {
        let entry = best.entry(s.candidate.clone()).or_insert_with(|| (s.clone(), BTreeSet::new()));
        entry.1.insert(s.job.clone());
        if (s.total, s.correlation) > (entry.0.total, entry.0.correlation) {
            entry.0 = s.clone();
        }
    }
    best.into_values().collect()
}

/// The suspects of one root cause, in tie groups (the same score from equally
/// strong evidence share a rank), and the ties said.
fn rank_root_cause(
    root: &RootCause,
    scores: &[CandidateScore],
    candidates: &BTreeMap<String, Candidate>,
    tie_bisect_max: usize,
) -> (Vec<Suspect>, Vec<SuspectTie>) {
    let groups = tie_groups(
        best_scores(root, scores),
        |(s, _)| Standing { score: s.total, strength: s.correlation as u8 },
        |(s, _)| s.candidate.clone(),
    );
    let mut revert_found = false;
    let mut out = Vec::new();
    let mut ties = Vec::new();
    for group in groups {
        let ids: Vec<String> = group.members.iter().map(|(s, _)| s.candidate.clone()).collect();
        let bisect_between = group.rank == 1
            && group.tied()
            && ids.len() <= tie_bisect_max
            && Band::of(group.standing.score) >= Band::Medium;
        if group.tied() {
            ties.push(SuspectTie {
                rank: group.rank,
                score: group.standing.score,
                separate_by: separate_by(&group.members, candidates, bisect_between, tie_bisect_max),
                candidates: ids.clone(),
                bisect_between,
            });
        }
        for (score, jobs) in group.members {
            let tied_with: Vec<String> = ids.iter().filter(|i| **i != score.candidate).cloned().collect();
            let mut suspect = suspect(root, score, jobs, group.rank, candidates, &mut revert_found);
            if !tied_with.is_empty() {
                tie_action(&mut suspect, &tied_with, bisect_between);
            }
            suspect.tied_with = tied_with;
            out.push(suspect);
        }
    }
    (out, ties)
}

/// A suspect with its action (a bisect is reported only once a revert explains the root cause).
fn suspect(
    root: &RootCause,
    score: CandidateScore,
    jobs: BTreeSet<String>,
    rank: u32,
    candidates: &BTreeMap<String, Candidate>,
    revert_found: &mut bool,
) -> Suspect {
    let candidate = &candidates[&score.candidate];
    let (mut action, mut reason) =
        action::candidate_action(score.total, candidate, root.class.class, root.kubelet_skew);
    if let (Some(cap), CandidateAction::ReportOnly | CandidateAction::Bisect) = (&score.cap, action) {
        reason = format!("{reason}; {cap}");
    }
    if action == CandidateAction::StageRevert {
        *revert_found = true;
    } else if action == CandidateAction::Bisect && *revert_found {
        action = CandidateAction::ReportOnly;
        reason = format!(
            "score {}, but a revert candidate with a specific verbatim match already explains {}",
            score.total, root.id
        );
    }
    Suspect {
        rank,
        candidate: score.candidate.clone(),
        root_cause: root.id.clone(),
        band: Band::of(score.total),
        jobs: jobs.into_iter().collect(),
        score,
        action,
        action_reason: reason,
        tied_with: Vec::new(),
    }
}

/// A tied suspect: a revert needs one culprit, so a tie in the revert band is
/// bisected between; a tie too large to bisect between is reported only.
fn tie_action(s: &mut Suspect, tied_with: &[String], bisect_between: bool) {
    let others = tied_with.join(", ");
    match s.action {
        CandidateAction::StageRevert | CandidateAction::Bisect if bisect_between => {
            s.action = CandidateAction::Bisect;
            s.action_reason =
                format!("score {}, tied with {others} on equally strong evidence: bisect between them", s.score.total);
        }
        CandidateAction::StageRevert | CandidateAction::Bisect => {
            s.action = CandidateAction::ReportOnly;
            s.action_reason = format!(
                "score {}, tied with {others} on equally strong evidence: too many to bisect between; more evidence must separate them first",
                s.score.total
            );
        }
        _ => s.action_reason = format!("{}; tied with {others}", s.action_reason),
    }
}

/// What would separate tied candidates: the kinds of link none of them has,
/// the diffs missing, and (when the tie is small) bisecting between them.
fn separate_by(
    members: &[(CandidateScore, BTreeSet<String>)],
    candidates: &BTreeMap<String, Candidate>,
    bisect_between: bool,
    tie_bisect_max: usize,
) -> String {
    let decisive = [
        (Signal::ErrorMessageMatch, "a string of the failure in its diff"),
        (Signal::CodePath, "a file or command of the failure in its diff"),
        (Signal::TestSubject, "the failing test's subject in its diff"),
        (Signal::TitleMatch, "the failure's subject in its title"),
    ];
    let missing: Vec<&str> = decisive
        .iter()
        .filter(|(signal, _)| !members.iter().any(|(s, _)| s.items.iter().any(|i| i.signal == *signal)))
        .map(|(_, what)| *what)
        .collect();
    let no_diff: Vec<String> = members
        .iter()
        .filter_map(|(s, _)| candidates.get(&s.candidate))
        .filter(|c| c.kind == CandidateKind::Pr && !c.diff_available)
        .map(Candidate::short)
        .collect();
    let mut parts = Vec::new();
    if !missing.is_empty() {
        parts.push(format!("none has {}", missing.join(", nor ")));
    }
    if !no_diff.is_empty() {
        parts.push(format!("no diff is available for {}", no_diff.join(", ")));
    }
    parts.push(if bisect_between {
        "bisecting between them will".to_string()
    } else if members.len() > tie_bisect_max {
        format!("{} candidates are too many to bisect between", members.len())
    } else {
        "a link specific to one of them would".to_string()
    });
    parts.join("; ")
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
