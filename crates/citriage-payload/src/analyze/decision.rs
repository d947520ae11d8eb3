//! Stage 7: the decision. The verdict is the strongest action of any suspect;
//! force-accept is checked; the summary says why in one sentence; each acted-on
//! suspect, each root cause left without action, force-accept and pending jobs
//! get a recommendation with the evidence behind it.

use std::collections::{BTreeMap, BTreeSet};

use super::candidates::Candidates;
use super::chain::ChainView;
use super::failure_modes::FailureModes;
use crate::action::{self, CandidateAction, Verdict};
use crate::candidate::Candidate;
use crate::classify::FailureClass;
use crate::result::{Decision, Recommendation, RootCause, Suspect};

/// The decision and the recommendations.
pub(crate) struct Decided {
    pub decision: Decision,
    pub recommendations: Vec<Recommendation>,
}

/// Decides and recommends.
pub(crate) fn decide(
    view: &ChainView,
    failures: &FailureModes,
    roots: &[RootCause],
    suspects: &[Suspect],
    candidates: &Candidates,
) -> Decided {
    let all_temporary_infra =
        !roots.is_empty() && roots.iter().all(|r| r.class.class == FailureClass::Infrastructure && r.class.temporary);
    let force_accept = action::force_accept(
        &view.target.phase,
        failures.failed_jobs.len(),
        all_temporary_infra,
        if view.chain.baseline.is_some() { view.hours_since_baseline } else { None },
        roots.iter().any(|r| r.kubelet_skew),
    );
    let verdict = suspects
        .iter()
        .map(|s| match s.action {
            CandidateAction::StageRevert => Verdict::StageRevert,
            CandidateAction::Bisect => Verdict::Bisect,
            _ => Verdict::ReportOnly,
        })
        .max()
        .unwrap_or(Verdict::ReportOnly);
    let summary = match verdict {
        Verdict::StageRevert => revert_summary(suspects, &candidates.all),
        Verdict::Bisect => bisect_summary(suspects, &candidates.all),
        Verdict::ReportOnly if failures.failed_jobs.is_empty() => {
            "No blocking job failed: nothing to act on.".to_string()
        }
        Verdict::ReportOnly => report_only_summary(roots, suspects, &candidates.all, all_temporary_infra),
    };
    let mut recommendations = suspect_recommendations(suspects, &candidates.all);
    let baseline = view.chain.baseline.as_deref();
    for root in roots {
        if let Some(text) = root_cause_recommendation(root, suspects, &candidates.all, candidates.ci_known, baseline) {
            let evidence = root
                .evidence
                .first()
                .map(|(j, l)| format!("{j} {}: {}", l.at.cite(), l.text))
                .into_iter()
                .collect::<Vec<_>>();
            recommendations.push(Recommendation { text, evidence });
        }
    }
    if force_accept.recommended {
        recommendations.push(Recommendation {
            text: "Force-accept the payload: every failure is temporary infrastructure.".into(),
            evidence: force_accept.reasons.clone(),
        });
    }
    if !failures.pending_jobs.is_empty() {
        recommendations.push(Recommendation {
            text: format!(
                "{} blocking job(s) still pending: re-run the analysis when they finish.",
                failures.pending_jobs.len()
            ),
            evidence: failures.pending_jobs.clone(),
        });
    }
    Decided { decision: Decision { verdict, summary, force_accept }, recommendations }
}

fn revert_summary(suspects: &[Suspect], candidates: &BTreeMap<String, Candidate>) -> String {
    let mut list: Vec<String> = suspects
        .iter()
        .filter(|s| s.action == CandidateAction::StageRevert)
        .map(|s| format!("{} ({})", candidates[&s.candidate].short(), s.score.total))
        .collect();
    list.dedup();
    format!(
        "Stage a revert of {}: a specific string of the failure appears in the change, the failure began with its payload, and a second link corroborates it.",
        list.join(", ")
    )
}

fn bisect_summary(suspects: &[Suspect], candidates: &BTreeMap<String, Candidate>) -> String {
    let mut list: Vec<String> = Vec::new();
    for s in suspects.iter().filter(|s| s.action == CandidateAction::Bisect) {
        let item = format!("{} ({})", candidates[&s.candidate].short(), s.score.total);
        if !list.contains(&item) {
            list.push(item);
        }
    }
    format!(
        "Bisect {}: linked to the failure by specific, corroborated evidence, but short of a revert.",
        list.join(", ")
    )
}

/// Why nothing is acted on: infrastructure, insufficient evidence, the best candidate's shortfall.
fn report_only_summary(
    roots: &[RootCause],
    suspects: &[Suspect],
    candidates: &BTreeMap<String, Candidate>,
    all_temporary_infra: bool,
) -> String {
    let best = suspects.iter().max_by_key(|s| (s.score.total, std::cmp::Reverse(s.candidate.clone())));
    let mut why = Vec::new();
    let infra: Vec<&RootCause> = roots.iter().filter(|r| r.class.class == FailureClass::Infrastructure).collect();
    let insufficient: Vec<&RootCause> = roots.iter().filter(|r| r.class.class == FailureClass::Unknown).collect();
    if all_temporary_infra {
        why.push("every failure is temporary infrastructure".to_string());
    } else if !infra.is_empty() {
        let mut reasons: Vec<String> =
            infra.iter().map(|r| r.class.reason.split(" (").next().unwrap_or(&r.class.reason).to_string()).collect();
        reasons.sort();
        reasons.dedup();
        why.push(format!(
            "{} of the {} root cause(s) {} infrastructure ({})",
            infra.len(),
            roots.len(),
            if infra.len() == 1 { "is" } else { "are" },
            reasons.join("; ")
        ));
    }
    if !insufficient.is_empty() {
        why.push(format!(
            "insufficient evidence for {} of the {} root cause(s) ({})",
            insufficient.len(),
            roots.len(),
            insufficient.iter().map(|r| r.id.as_str()).collect::<Vec<_>>().join(", ")
        ));
    }
    match best {
        Some(b) if b.score.total >= 60 => why.push(format!(
            "the best-linked candidate, {} ({}), explains a failure classified as {}, which a revert cannot fix",
            candidates[&b.candidate].short(),
            b.score.total,
            roots.iter().find(|r| r.id == b.root_cause).map(|r| r.class.class.as_str()).unwrap_or("unknown")
        )),
        Some(b) => why.push(format!(
            "no candidate reaches 60 (best: {} at {}{})",
            candidates[&b.candidate].short(),
            b.score.total,
            b.score.cap.as_ref().map(|c| format!(", {c}")).unwrap_or_default()
        )),
        None if infra.len() + insufficient.len() < roots.len() => {
            why.push("no candidate is linked to the other failures".to_string())
        }
        None => {}
    }
    format!("Report only: {}.", why.join("; "))
}

/// One recommendation per candidate acted on (revert, bisect, escalate, wait), with its evidence.
fn suspect_recommendations(suspects: &[Suspect], candidates: &BTreeMap<String, Candidate>) -> Vec<Recommendation> {
    let mut root_causes_of: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for s in suspects.iter().filter(|s| s.action != CandidateAction::ReportOnly) {
        root_causes_of.entry(s.candidate.clone()).or_default().push(s.root_cause.clone());
    }
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::new();
    for s in suspects.iter().filter(|s| s.action != CandidateAction::ReportOnly) {
        if !done.insert(s.candidate.clone()) {
            continue;
        }
        let roots = root_causes_of.get(&s.candidate).map(|v| v.join(", ")).unwrap_or_default();
        let c = &candidates[&s.candidate];
        if s.action == CandidateAction::Bisect && !s.tied_with.is_empty() {
            let group: Vec<&Suspect> = std::iter::once(s)
                .chain(suspects.iter().filter(|o| o.root_cause == s.root_cause && s.tied_with.contains(&o.candidate)))
                .collect();
            for g in &group {
                done.insert(g.candidate.clone());
            }
            out.push(bisect_between(&group, candidates));
            continue;
        }
        let text = match s.action {
            CandidateAction::StageRevert => format!("Revert {} ({}) for {roots} — {}; policy requires reverting a change that breaks payloads.", c.short(), c.title, s.action_reason),
            CandidateAction::Bisect => format!("Bisect {} ({}) for {roots}: draft a revert and run the failing payload jobs ({}) against it — {}.", c.short(), c.title, s.jobs.join(", "), s.action_reason),
            CandidateAction::EscalateRhcos => format!("Escalate {} to the RHCOS team: RPM changes cannot be reverted through a PR.", c.title),
            CandidateAction::WaitForKubeletRebuild => format!("Do not revert {}: wait for the RHCOS carrying the kubelet rebuilt from the rebase (kubelet version skew).", c.short()),
            CandidateAction::ReportOnly => continue,
        };
        out.push(Recommendation { text, evidence: suspect_evidence(s) });
    }
    out
}

/// One recommendation for tied suspects: bisect between them, each one's evidence listed.
fn bisect_between(group: &[&Suspect], candidates: &BTreeMap<String, Candidate>) -> Recommendation {
    let names: Vec<String> = group
        .iter()
        .map(|g| format!("{} ({})", candidates[&g.candidate].short(), candidates[&g.candidate].title))
        .collect();
    let mut jobs: Vec<&str> = group.iter().flat_map(|g| g.jobs.iter().map(String::as_str)).collect();
    jobs.sort();
    jobs.dedup();
    let text = format!(
        "Bisect between {} for {}: they tie at {} on equally strong evidence; draft a revert of each and run the failing payload jobs ({}) against them.",
        names.join(" and "),
        group[0].root_cause,
        group[0].score.total,
        jobs.join(", ")
    );
    let evidence = group
        .iter()
        .flat_map(|g| {
            suspect_evidence(g).into_iter().map(move |e| format!("{}: {e}", candidates[&g.candidate].short()))
        })
        .collect();
    Recommendation { text, evidence }
}

/// The evidence lines of a suspect: its verbatim match, then each scored item.
fn suspect_evidence(s: &Suspect) -> Vec<String> {
    let mut evidence = Vec::new();
    if let Some(m) = &s.score.error_match {
        evidence.push(format!("log {}: {}", m.log.at.cite(), m.log.text));
        evidence.push(format!("diff {}:{}: {}", m.diff_file, m.diff_line, m.diff_text));
        if !m.why_specific.is_empty() {
            evidence.push(format!("why specific: {}", m.why_specific));
        }
    }
    for i in &s.score.items {
        evidence.push(format!("{} +{}: {}", i.signal.name(), i.points, i.evidence));
    }
    evidence
}

/// What to do about a root cause no suspect acts on (or that no change can fix).
fn root_cause_recommendation(
    root: &RootCause,
    suspects: &[Suspect],
    candidates: &BTreeMap<String, Candidate>,
    ci_known: bool,
    baseline: Option<&str>,
) -> Option<String> {
    let jobs = root.jobs.join(", ");
    let acted = suspects.iter().any(|s| s.root_cause == root.id && s.action != CandidateAction::ReportOnly);
    let id = &root.id;
    let reason = &root.class.reason;
    match root.class.class {
        FailureClass::Infrastructure if root.class.temporary => {
            Some(format!("{id}: temporary infrastructure ({reason}) — retry {jobs}; no change is implicated."))
        }
        FailureClass::Infrastructure => Some(format!(
            "{id}: persistent infrastructure or external problem ({reason}) — needs a human fix before {jobs} can pass; no change is implicated."
        )),
        FailureClass::CiConfiguration if !acted => Some(format!(
            "{id}: CI-configuration failure ({reason}) — check the CI-configuration changes since {} for {jobs}.{}",
            root.first_failed_in,
            ci_hint(root, ci_known, baseline)
        )),
        FailureClass::Flake => Some(format!("{id}: flake ({reason}) — track it, do not revert.")),
        FailureClass::Unknown if !acted => Some(format!(
            "{id}: {} for {jobs} — no action; collect the job's JUnit and build log. The job has failed since {}.{}",
            root.title,
            root.first_failed_in,
            ci_hint(root, ci_known, baseline)
        )),
        FailureClass::ProductRegression if !acted && root.ties.first().is_some_and(|t| t.rank == 1) => {
            let tie = &root.ties[0];
            let names: Vec<String> = tie.candidates.iter().map(|id| candidates[id].short()).collect();
            Some(format!(
                "{id}: product failure; its best suspects tie at {} ({}) — to separate them: {}.",
                tie.score,
                names.join(", "),
                tie.separate_by
            ))
        }
        FailureClass::ProductRegression if !acted => {
            let best = suspects.iter().filter(|s| s.root_cause == root.id).max_by_key(|s| s.score.total);
            Some(format!(
                "{id}: product failure without a candidate strong enough to act on — file a bug with the evidence below; {}{}.",
                if root.is_systemic {
                    "it is systemic (seen in other jobs / platforms)"
                } else {
                    "it is confined to the listed jobs"
                },
                best.map(|b| format!(
                    "; best suspect {} ({}){}",
                    candidates[&b.candidate].short(),
                    b.score.total,
                    b.score.cap.as_ref().map(|c| format!(", {c}")).unwrap_or_default()
                ))
                .unwrap_or_default()
            ))
        }
        _ => None,
    }
}

/// Where to look in the CI configuration, and how to rank its changes.
fn ci_hint(root: &RootCause, ci_known: bool, baseline: Option<&str>) -> String {
    if root.ci_look_at.is_empty() {
        String::new()
    } else if ci_known {
        format!(" Look at {}.", root.ci_look_at.join("; "))
    } else {
        format!(
            " Look at {}; pass --ci-config with an openshift/release checkout to rank the commits that touched them since {}.",
            root.ci_look_at.join("; "),
            baseline.map(str::to_string).unwrap_or_else(|| root.first_failed_in.clone())
        )
    }
}
