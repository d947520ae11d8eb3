//! Self-checks of an analysis and its Markdown: statements that contradict each
//! other or the data ("no candidate reaches 60" beside a suspect at 90, a
//! recommendation without evidence, "Data gaps: none" while no failed job has
//! evidence, empty lists printed as `platforms ;`). Each problem is one
//! sentence; none means the report is consistent.

use std::sync::OnceLock;

use regex::Regex;

use crate::action::{Band, CandidateAction, Verdict};
use crate::evidence::JunitState;
use crate::result::PayloadAnalysis;

/// The contradictions found in an analysis and its rendered Markdown.
pub fn contradictions(a: &PayloadAnalysis, markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    decision(a, &mut out);
    suspects(a, &mut out);
    ranks(a, &mut out);
    evidence(a, &mut out);
    printed(markdown, &mut out);
    out
}

/// The verdict, the summary and force-accept against the suspects' actions.
fn decision(a: &PayloadAnalysis, out: &mut Vec<String>) {
    let max = a.suspects.iter().map(|s| s.score.total).max().unwrap_or(0);
    if a.decision.summary.contains("no candidate reaches 60") && max >= 60 {
        out.push(format!("the summary says no candidate reaches 60 but a suspect scores {max}"));
    }
    let has = |act: CandidateAction| a.suspects.iter().any(|s| s.action == act);
    let expected = if has(CandidateAction::StageRevert) {
        Verdict::StageRevert
    } else if has(CandidateAction::Bisect) {
        Verdict::Bisect
    } else {
        Verdict::ReportOnly
    };
    if a.decision.verdict != expected {
        out.push(format!(
            "the verdict is {} but the suspects' actions make it {}",
            a.decision.verdict.as_str(),
            expected.as_str()
        ));
    }
    if a.decision.force_accept.recommended && expected != Verdict::ReportOnly {
        out.push("force-accept is recommended beside a revert or bisect".into());
    }
    if a.decision.force_accept.recommended && a.payload.phase == crate::release::Phase::Accepted {
        out.push("force-accept is recommended for a payload already Accepted".into());
    }
}

/// Each suspect's action against its band and reason; acting recommendations quote evidence.
fn suspects(a: &PayloadAnalysis, out: &mut Vec<String>) {
    for s in &a.suspects {
        let ok = match s.action {
            CandidateAction::StageRevert => s.band == Band::High,
            CandidateAction::Bisect => s.band >= Band::Medium,
            _ => true,
        };
        if !ok {
            out.push(format!(
                "{} is marked {} at {} ({})",
                s.candidate,
                s.action.as_str(),
                s.score.total,
                s.band.as_str()
            ));
        }
        if s.action == CandidateAction::ReportOnly && s.band >= Band::Medium && s.action_reason.contains("< 60") {
            out.push(format!("{} scores {} but its reason says < 60", s.candidate, s.score.total));
        }
    }
    for r in &a.recommendations {
        let acts = r.text.starts_with("Revert ") || r.text.starts_with("Bisect ");
        if acts && r.evidence.is_empty() {
            out.push(format!("a recommendation acts without quoting evidence: {}", r.text));
        }
    }
}

/// Suspects with the same score and strength share a rank (a tie, said); more
/// root causes than failed jobs each say why they stand apart.
fn ranks(a: &PayloadAnalysis, out: &mut Vec<String>) {
    for (i, s) in a.suspects.iter().enumerate() {
        for o in a.suspects.iter().skip(i + 1).filter(|o| o.root_cause == s.root_cause) {
            let same = (s.score.total, s.score.correlation) == (o.score.total, o.score.correlation);
            if same != (s.rank == o.rank) {
                out.push(format!(
                    "{} and {} of {} score {} and {} but rank {} and {}",
                    s.candidate, o.candidate, s.root_cause, s.score.total, o.score.total, s.rank, o.rank
                ));
            }
        }
    }
    if a.root_causes.len() > a.failed_jobs.len() && a.root_causes.iter().any(|r| r.apart.is_none()) {
        out.push(format!(
            "{} root causes for {} failed job(s), and not each says why it stands apart",
            a.root_causes.len(),
            a.failed_jobs.len()
        ));
    }
}

/// Jobs without evidence are said, and carry no classification.
fn evidence(a: &PayloadAnalysis, out: &mut Vec<String>) {
    let without: Vec<&str> = a
        .failed_jobs
        .iter()
        .filter(|j| {
            !matches!(j.junit, Some(JunitState::Found { .. }) | Some(JunitState::Partial { .. }))
                && j.modes.iter().all(|m| m.lines.is_empty())
        })
        .map(|j| j.name.as_str())
        .collect();
    if !without.is_empty() && a.data_gaps.is_empty() {
        out.push(format!("no data gap is reported although {} failed job(s) have no evidence", without.len()));
    }
    if !a.failed_jobs.is_empty()
        && without.len() == a.failed_jobs.len()
        && a.root_causes.iter().any(|r| {
            !matches!(r.class.class, crate::classify::FailureClass::Unknown)
                && r.jobs.iter().all(|j| without.contains(&j.as_str()))
        })
    {
        out.push("a failure without evidence carries a classification".into());
    }
}

/// Empty lists printed in the Markdown.
fn printed(markdown: &str, out: &mut Vec<String>) {
    static EMPTY_LIST: OnceLock<Regex> = OnceLock::new();
    let empty = EMPTY_LIST.get_or_init(|| {
        Regex::new(r"(?m)\b(platforms|jobs|tests|systemic|candidates|evidence)(\s+[;,]|\s*:\s*[;,.]\s)").unwrap()
    });
    for m in empty.find_iter(markdown).take(3) {
        out.push(format!("an empty list is printed: `{}`", m.as_str()));
    }
}
