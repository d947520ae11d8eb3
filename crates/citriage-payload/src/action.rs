//! What to do about a payload: confidence bands, per-candidate actions with the
//! never-revert rules, the force-accept conditions and the overall verdict.
//!
//! - score ≥ 85: stage a revert; 60-84: bisect (draft revert + payload jobs);
//!   < 60: report only;
//! - a revert or bisect is only proposed for a product regression (or, for a
//!   CI-configuration change, a CI-configuration failure): infrastructure,
//!   flakes, informing-only and unknown failures are reported only;
//! - RHCOS RPM candidates are never reverted: they are escalated to the RHCOS team;
//! - a Kubernetes rebase whose failures show kubelet version skew is never
//!   reverted: the kubelet rebuild lags the rebase, so the action is to wait for
//!   the RHCOS carrying the rebuilt kubelet (neither force-accept nor force-reject);
//! - force-accept is recommended only when the payload is not already Accepted,
//!   every failure is temporary infrastructure, at most 2 blocking jobs failed and
//!   no payload has been all-green for 18 hours or more (unknown counts as more).

use serde::{Deserialize, Serialize};

use crate::candidate::{Candidate, CandidateKind};
use crate::classify::FailureClass;
use crate::release::Phase;

/// Confidence band of a score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Band {
    Low,
    Medium,
    High,
}

impl Band {
    /// The band of a score.
    pub fn of(score: u32) -> Band {
        match score {
            85.. => Band::High,
            60..=84 => Band::Medium,
            _ => Band::Low,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Band::High => "HIGH",
            Band::Medium => "MEDIUM",
            Band::Low => "LOW",
        }
    }
}

/// What to do with one candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum CandidateAction {
    StageRevert,
    Bisect,
    ReportOnly,
    /// RHCOS RPM candidate: escalate to the RHCOS / platform team.
    EscalateRhcos,
    /// Kubernetes rebase with kubelet skew: wait for the rebuilt kubelet.
    WaitForKubeletRebuild,
}

impl CandidateAction {
    pub fn as_str(self) -> &'static str {
        match self {
            CandidateAction::StageRevert => "stage revert",
            CandidateAction::Bisect => "bisect",
            CandidateAction::ReportOnly => "report only",
            CandidateAction::EscalateRhcos => "escalate to RHCOS team",
            CandidateAction::WaitForKubeletRebuild => "wait for rebuilt kubelet",
        }
    }
}

/// Decides the action for a candidate of a failure of class `class`.
pub fn candidate_action(
    score: u32,
    c: &Candidate,
    class: FailureClass,
    kubelet_skew: bool,
) -> (CandidateAction, String) {
    let band = Band::of(score);
    if c.kind == CandidateKind::RhcosRpm {
        return if band >= Band::Medium {
            (
                CandidateAction::EscalateRhcos,
                "RHCOS RPM changes are never reverted through a PR: escalate to the RHCOS / platform team".into(),
            )
        } else {
            (CandidateAction::ReportOnly, format!("score {score} < 60"))
        };
    }
    if c.is_rebase && kubelet_skew && band >= Band::Medium {
        return (
            CandidateAction::WaitForKubeletRebuild,
            "Kubernetes rebase with kubelet version skew: transient build lag, wait for the RHCOS with the rebuilt kubelet".into(),
        );
    }
    let eligible = matches!(
        (class, c.kind),
        (FailureClass::ProductRegression, CandidateKind::Pr)
            | (FailureClass::CiConfiguration | FailureClass::ProductRegression, CandidateKind::CiConfig)
            | (FailureClass::CiConfiguration, CandidateKind::Pr)
    );
    // A CI step that failed without explanation: a change to that very step may
    // be bisected, never reverted on that evidence alone.
    if class == FailureClass::Unknown && c.kind == CandidateKind::CiConfig && band >= Band::Medium {
        return (
            CandidateAction::Bisect,
            format!("score {score}: the failing CI step's output is insufficient evidence for a revert"),
        );
    }
    if !eligible {
        return (CandidateAction::ReportOnly, format!("{} failure: no revert or bisect", class.as_str()));
    }
    match band {
        Band::High => (CandidateAction::StageRevert, format!("score {score} ≥ 85")),
        Band::Medium => (CandidateAction::Bisect, format!("score {score} in 60-84")),
        Band::Low => (CandidateAction::ReportOnly, format!("score {score} < 60")),
    }
}

/// The overall verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Verdict {
    ReportOnly,
    Bisect,
    StageRevert,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::StageRevert => "STAGE REVERT",
            Verdict::Bisect => "BISECT",
            Verdict::ReportOnly => "REPORT ONLY",
        }
    }
}

/// The force-accept recommendation with the reason for each condition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForceAccept {
    pub recommended: bool,
    /// One line per condition checked.
    pub reasons: Vec<String>,
}

/// Checks the force-accept conditions.
pub fn force_accept(
    phase: &Phase,
    failed_blocking: usize,
    all_temporary_infra: bool,
    hours_since_baseline: Option<f64>,
    kubelet_skew: bool,
) -> ForceAccept {
    let mut reasons = Vec::new();
    let mut ok = true;
    if *phase == Phase::Accepted {
        reasons.push("the payload is already Accepted: force-accept is moot".into());
        ok = false;
    }
    if failed_blocking == 0 {
        reasons.push("no blocking job failed".into());
        ok = false;
    }
    if kubelet_skew {
        reasons.push(
            "kubelet version skew after a rebase: neither force-accept nor force-reject, wait for the rebuilt kubelet"
                .into(),
        );
        ok = false;
    }
    if all_temporary_infra {
        reasons.push("every failure is temporary infrastructure".into());
    } else {
        reasons.push("not every failure is temporary infrastructure".into());
        ok = false;
    }
    if failed_blocking <= 2 {
        reasons.push(format!("{failed_blocking} blocking job(s) failed (≤ 2)"));
    } else {
        reasons.push(format!("{failed_blocking} blocking jobs failed (> 2)"));
        ok = false;
    }
    match hours_since_baseline {
        Some(h) if h < 18.0 => {
            reasons.push(format!("the last all-green payload is only {h:.1} h old (< 18 h)"));
            ok = false;
        }
        Some(h) => reasons.push(format!("no all-green payload for {h:.1} h (≥ 18 h)")),
        None => reasons.push("no all-green payload within the chain (≥ 18 h assumed)".into()),
    }
    ForceAccept { recommended: ok, reasons }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(kind: CandidateKind) -> Candidate {
        Candidate {
            id: "x".into(),
            kind,
            title: String::new(),
            url: None,
            component: "c".into(),
            repo: None,
            number: None,
            images: vec![],
            payload: None,
            date: None,
            rpm: None,
            diff: None,
            diff_available: false,
            presubmits: None,
            is_rebase: false,
        }
    }

    #[test]
    fn bands_and_guards() {
        assert_eq!(Band::of(85), Band::High);
        assert_eq!(Band::of(84), Band::Medium);
        assert_eq!(Band::of(59), Band::Low);
        let pr = cand(CandidateKind::Pr);
        assert_eq!(candidate_action(100, &pr, FailureClass::ProductRegression, false).0, CandidateAction::StageRevert);
        assert_eq!(candidate_action(100, &pr, FailureClass::Infrastructure, false).0, CandidateAction::ReportOnly);
        assert_eq!(candidate_action(100, &pr, FailureClass::Flake, false).0, CandidateAction::ReportOnly);
        assert_eq!(
            candidate_action(100, &cand(CandidateKind::RhcosRpm), FailureClass::ProductRegression, false).0,
            CandidateAction::EscalateRhcos
        );
        let mut rebase = cand(CandidateKind::Pr);
        rebase.is_rebase = true;
        assert_eq!(
            candidate_action(95, &rebase, FailureClass::ProductRegression, true).0,
            CandidateAction::WaitForKubeletRebuild
        );
    }

    #[test]
    fn force_accept_rules() {
        assert!(force_accept(&Phase::Rejected, 1, true, Some(20.0), false).recommended);
        assert!(!force_accept(&Phase::Accepted, 1, true, Some(20.0), false).recommended);
        assert!(!force_accept(&Phase::Rejected, 3, true, Some(20.0), false).recommended);
        assert!(!force_accept(&Phase::Rejected, 1, true, Some(5.0), false).recommended);
        assert!(!force_accept(&Phase::Rejected, 1, false, None, false).recommended);
        assert!(force_accept(&Phase::Ready, 2, true, None, false).recommended);
    }
}
