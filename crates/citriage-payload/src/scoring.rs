//! Suspect scoring: a deterministic, itemized rubric per (failed job, failure
//! mode, candidate), capped at 100, whose bands are earned only with
//! corroborated, specific evidence.
//!
//! A *link* ties a candidate to a failure mode; each is quoted with what makes
//! it specific:
//!
//! | signal | points | fires when |
//! |---|---|---|
//! | `error_message_match` | +40 / +20 | a string, symbol, resource or file name taken from the lines that explain the failure appears in an **added** line of a product file of the diff; +40 when the token is specific (found in exactly one candidate of the window), +20 when 2-3 candidates carry it; tokens in 4+ candidates earn nothing |
//! | `code_path` | +20 / +10 | the diff modifies a file the evidence names (stack frame, log prefix), the source of the failing command (`oc adm release extract` → `…/release/extract.go`), or removes a line carrying an evidence token; +20 when specific |
//! | `test_subject` | +20 | the diff touches a word of the failure's subject (the failing test's name, the strings its error lines quote) in a product path or in the code of a product line, and no other candidate does: the change touches what the failing test exercises, which a change merely in the same component does not |
//! | `test_binary` | +20 / +10 | test binaries could not be listed or extracted and the diff modifies that binary (+20) or other test-extension code (+10) |
//! | `ci_step` | +20 | a CI-configuration change modifies the failing step (`<ref>-commands.sh`, `<ref>-ref.yaml`) or the job's configuration |
//! | `title_match` | +15 / +10 | a word of the failure's subject appears in the candidate's title and in no other title of the window, is no generic English or CI word nor a word of the component the failure names, and few diffs of the window touch it: +15 when an error line names it (a quoted resource, a `kind/name`, the failing command), +10 when only the failing test's name does |
//! | `component` | +20 / +10 | the candidate's repository or image owns the failing component: the test's owner, ClusterOperator or namespace (+20) or a component the failure names (+10) |
//! | `new_failure_mode` | +30 | the mode began with the payload that contains the candidate (the job passed, or failed differently, in the payload before) and the candidate has a link |
//! | `component_exclusivity` | +10 | the candidate is the only linked candidate of the mode |
//! | `multi_job_correlation` | +10 | the candidate has a code-path or stronger link with the same root cause in 2+ failed jobs |
//! | `presubmit_coverage_gap` | +10 | the candidate is linked, its presubmit jobs are known, and none covers the failing job's scenario |
//!
//! Bands need corroboration, not one token: a score of 85 or more (stage a
//! revert) requires a specific verbatim match, an established onset in the
//! candidate's payload and a second, independent link (component, code path,
//! title or test binary); 60-84 (bisect) requires an established onset, a
//! specific link and a second kind of link (a CI change modifying the failing
//! step suffices alone). A score that lacks them is capped below the band, and
//! the cap says what is missing.
//!
//! Infrastructure causes, flakes, informing-only failures and failures without
//! evidence give candidates nothing (each carries a zero-point note saying
//! why); a failure classified as a CI-configuration problem gives payload PRs
//! nothing unless they match the error verbatim and specifically.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::candidate::{Candidate, CandidateKind};
use crate::classify::FailureClass;
use citriage_suspects::links::VerbatimMatch;

/// Rubric signals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Signal {
    NewFailureMode,
    ComponentExclusivity,
    ErrorMessageMatch,
    CodePath,
    TestSubject,
    TestBinary,
    CiStep,
    TitleMatch,
    Component,
    MultiJobCorrelation,
    PresubmitCoverageGap,
}

impl Signal {
    pub fn name(self) -> &'static str {
        match self {
            Signal::NewFailureMode => "new_failure_mode",
            Signal::ComponentExclusivity => "component_exclusivity",
            Signal::ErrorMessageMatch => "error_message_match",
            Signal::CodePath => "code_path",
            Signal::TestSubject => "test_subject",
            Signal::TestBinary => "test_binary",
            Signal::CiStep => "ci_step",
            Signal::TitleMatch => "title_match",
            Signal::Component => "component",
            Signal::MultiJobCorrelation => "multi_job_correlation",
            Signal::PresubmitCoverageGap => "presubmit_coverage_gap",
        }
    }
}

/// One fired signal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScoreItem {
    pub signal: Signal,
    pub points: u32,
    pub evidence: String,
}

/// How a candidate relates to a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Correlation {
    None,
    Subsystem,
    CodePath,
    Direct,
}

/// The score of one (job, mode, candidate).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CandidateScore {
    pub candidate: String,
    /// Short verification name of the failed job.
    pub job: String,
    /// Signature id of the failure mode.
    pub mode: String,
    pub root_cause: String,
    pub items: Vec<ScoreItem>,
    /// `min(100, sum of items)`, lowered below a band whose conditions are not met.
    pub total: u32,
    pub correlation: Correlation,
    pub error_match: Option<VerbatimMatch>,
    /// Why nothing fired, when nothing did.
    pub note: Option<String>,
    /// Why the total is below the sum of its items (a band's missing condition).
    #[serde(default)]
    pub cap: Option<String>,
}

/// A link between a candidate and a failure mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub signal: Signal,
    pub points: u32,
    /// The link is specific (rare in the window, or structural).
    pub specific: bool,
    /// What was found, quoted, and why it is specific.
    pub evidence: String,
}

/// What correlating one candidate with one failure mode found.
#[derive(Debug, Clone, Default)]
pub struct CorrelationResult {
    pub level: Option<Correlation>,
    pub error_match: Option<VerbatimMatch>,
    pub links: Vec<Link>,
    /// Why the candidate was ruled out before looking for links.
    pub excluded: Option<String>,
}

impl CorrelationResult {
    /// The strongest correlation.
    pub fn level(&self) -> Correlation {
        self.level.unwrap_or(Correlation::None)
    }

    /// Adds a link at its correlation level.
    pub fn add(&mut self, l: Link, level: Correlation) {
        if self.level.is_none_or(|x| x < level) {
            self.level = Some(level);
        }
        self.links.push(l);
    }

    /// True when a link of this signal exists.
    pub fn has(&self, s: Signal) -> bool {
        self.links.iter().any(|l| l.signal == s)
    }
}

/// Everything needed to score one (job, mode, candidate) once correlations are known.
pub struct ScoreContext<'a> {
    pub job: &'a str,
    pub mode: &'a str,
    pub root_cause: &'a str,
    pub class: FailureClass,
    /// The mode began in the candidate's payload: description of the onset evidence.
    pub onset_here: Option<String>,
    /// The candidate is the only one linked to this mode.
    pub sole_linked: bool,
    pub payload: &'a str,
    /// Jobs (other than this one) where the candidate has a code-path or stronger link with this root cause.
    pub other_jobs: Vec<String>,
    /// A presubmit coverage gap, described, when the presubmits are known and miss the scenario.
    pub presubmit_gap: Option<String>,
    /// The mode failed in a CI step (CI-configuration changes may explain it).
    pub in_ci_step: bool,
}

/// Applies the rubric and the band conditions.
pub fn score(ctx: &ScoreContext, c: &Candidate, corr: &CorrelationResult) -> CandidateScore {
    let mut s = CandidateScore {
        candidate: c.id.clone(),
        job: ctx.job.to_string(),
        mode: ctx.mode.to_string(),
        root_cause: ctx.root_cause.to_string(),
        items: Vec::new(),
        total: 0,
        correlation: corr.level(),
        error_match: corr.error_match.clone(),
        note: None,
        cap: None,
    };
    if let Some(n) = excluded(ctx, c, corr) {
        s.note = Some(n.to_string());
        return s;
    }
    if corr.links.is_empty() {
        s.note = Some(
            corr.excluded
                .clone()
                .unwrap_or_else(|| "no error-message, code-path, title or component link to this failure".into()),
        );
        return s;
    }
    s.items = items(ctx, c, corr);
    s.total = s.items.iter().map(|i| i.points).sum::<u32>().min(100);
    if c.kind != CandidateKind::RhcosRpm {
        apply_band_conditions(&mut s, ctx, corr);
    }
    s
}

/// True when the correlation has a specific verbatim match.
fn specific_verbatim(corr: &CorrelationResult) -> bool {
    corr.links.iter().any(|l| l.signal == Signal::ErrorMessageMatch && l.specific)
}

/// Why no signal applies to this class of failure, when none does.
fn excluded(ctx: &ScoreContext, c: &Candidate, corr: &CorrelationResult) -> Option<&'static str> {
    let specific_verbatim = specific_verbatim(corr);
    match ctx.class {
        FailureClass::Infrastructure => {
            Some("infrastructure cause: a payload change cannot explain it, so no signal applies")
        }
        FailureClass::InformingOnly => Some("only informing tests failed: they cannot reject the payload"),
        FailureClass::Flake if !specific_verbatim => {
            Some("flake: the failure predates this candidate or passed on retry")
        }
        FailureClass::CiConfiguration if c.kind != CandidateKind::CiConfig && !specific_verbatim => {
            Some("CI-configuration cause: payload changes without a specific verbatim match do not explain it")
        }
        FailureClass::Unknown if !(c.kind == CandidateKind::CiConfig && ctx.in_ci_step) => {
            Some("insufficient evidence: nothing of the failure is known to correlate")
        }
        _ => None,
    }
}

/// The scored items: each link, then onset, exclusivity, multi-job correlation
/// and presubmit coverage gap, sorted by signal.
fn items(ctx: &ScoreContext, c: &Candidate, corr: &CorrelationResult) -> Vec<ScoreItem> {
    let mut items: Vec<ScoreItem> = corr
        .links
        .iter()
        .map(|l| ScoreItem { signal: l.signal, points: l.points, evidence: l.evidence.clone() })
        .collect();
    if let Some(onset) = &ctx.onset_here {
        items.push(ScoreItem { signal: Signal::NewFailureMode, points: 30, evidence: onset.clone() });
    }
    if ctx.sole_linked {
        items.push(ScoreItem {
            signal: Signal::ComponentExclusivity,
            points: 10,
            evidence: format!("the only candidate of the window linked to this failure ({})", ctx.payload),
        });
    }
    if !ctx.other_jobs.is_empty() && corr.level() >= Correlation::CodePath {
        items.push(ScoreItem {
            signal: Signal::MultiJobCorrelation,
            points: 10,
            evidence: format!(
                "the same link holds in {} other failed job(s): {}",
                ctx.other_jobs.len(),
                ctx.other_jobs.join(", ")
            ),
        });
    }
    if let Some(g) = &ctx.presubmit_gap {
        if c.kind != CandidateKind::RhcosRpm {
            items.push(ScoreItem { signal: Signal::PresubmitCoverageGap, points: 10, evidence: g.clone() });
        }
    }
    items.sort_by_key(|i| i.signal);
    items
}

/// Lowers a total that lacks a band's conditions below the band, saying what it lacks.
fn apply_band_conditions(s: &mut CandidateScore, ctx: &ScoreContext, corr: &CorrelationResult) {
    let onset = ctx.onset_here.is_some();
    let kinds: BTreeSet<Signal> = corr.links.iter().map(|l| l.signal).collect();
    let any_specific = corr.links.iter().any(|l| l.specific);
    let ci_step = corr.has(Signal::CiStep);
    // A subject or title word the failure's test name alone gives, or that another
    // candidate shares, is too weak to stand second to a revert.
    let second = corr.links.iter().any(|l| {
        l.signal != Signal::ErrorMessageMatch
            && (l.specific || !matches!(l.signal, Signal::TestSubject | Signal::TitleMatch))
    });
    if s.total >= 85 {
        let mut missing = Vec::new();
        if !specific_verbatim(corr) {
            missing.push("a specific verbatim match");
        }
        if !onset {
            missing.push("an established onset in its payload");
        }
        if !second {
            missing.push("a second, independent link (component, code path, title or test binary)");
        }
        if !missing.is_empty() {
            s.total = 84;
            s.cap = Some(format!("not a revert: it lacks {}", missing.join(" and ")));
        }
    }
    if s.total >= 60 {
        let mut missing = Vec::new();
        if !onset {
            missing.push("an established onset in its payload");
        }
        if !any_specific {
            missing.push("a specific link");
        }
        if kinds.len() < 2 && !ci_step {
            missing.push("a second kind of link");
        }
        if !missing.is_empty() {
            s.total = 59;
            s.cap = Some(format!("not a bisect: it lacks {}", missing.join(" and ")));
        }
    }
}

fn find_bounded_ci(hay_lower: &str, w: &str) -> bool {
    let hb = hay_lower.as_bytes();
    let mut start = 0;
    while let Some(i) = hay_lower[start..].find(w) {
        let s = start + i;
        let e = s + w.len();
        let ok_l = s == 0 || !(hb[s - 1].is_ascii_alphanumeric());
        let ok_r = e >= hb.len() || !(hb[e].is_ascii_alphanumeric());
        if ok_l && ok_r {
            return true;
        }
        start = s + hay_lower[s..].chars().next().map(char::len_utf8).unwrap_or(1);
        if start >= hay_lower.len() {
            break;
        }
    }
    false
}

/// Scenario words of a job name that a presubmit must share to cover it.
pub fn scenario_words(job: &str) -> BTreeSet<String> {
    const WORDS: &[&str] = &[
        "techpreview",
        "serial",
        "upgrade",
        "fips",
        "ipv6",
        "dualstack",
        "single-node",
        "sno",
        "proxy",
        "disconnected",
        "hypershift",
        "microshift",
        "rt",
        "cgroupsv1",
        "arm64",
        "multi",
        "aws",
        "gcp",
        "azure",
        "metal",
        "vsphere",
        "openstack",
        "ibmcloud",
        "nutanix",
        "ovn",
        "sdn",
    ];
    let lower = job.to_ascii_lowercase();
    WORDS.iter().filter(|w| find_bounded_ci(&lower, w)).map(|w| w.to_string()).collect()
}

/// A presubmit coverage gap: the PR's presubmits are known and none carries all
/// the scenario words of the failing job.
pub fn presubmit_gap(failing_job: &str, presubmits: &[String]) -> Option<String> {
    let need = scenario_words(failing_job);
    if need.is_empty() || presubmits.is_empty() {
        return None;
    }
    let covered = presubmits.iter().any(|p| {
        let have = scenario_words(p);
        need.iter().all(|w| have.contains(w))
    });
    (!covered).then(|| {
        format!(
            "none of the PR's {} presubmit jobs covers the scenario [{}] of {failing_job}",
            presubmits.len(),
            need.into_iter().collect::<Vec<_>>().join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::links::correlate;
    use crate::test_support::{cand, evidence, ll, window};

    #[test]
    fn one_token_is_not_a_revert() {
        let c = cand(
            "pr:a/op#1",
            "a/op",
            "Label nodes",
            "--- a/pkg/x.go\n+++ b/pkg/x.go\n@@ -1,0 +1,1 @@\n+func reconcileNodeLabels() {}\n",
        );
        let w = window(&[&c]);
        let ev = evidence(vec![ll("failed: reconcileNodeLabels returned an error", 3)], vec![]);
        let r = correlate(&ev, &c, &w.docs[&c.id], &w, &citriage_suspects::links::Weights::default());
        let ctx = ScoreContext {
            job: "j",
            mode: "m",
            root_cause: "RC1",
            class: FailureClass::ProductRegression,
            onset_here: Some("began here".into()),
            sole_linked: true,
            payload: "p",
            other_jobs: vec!["k".into()],
            presubmit_gap: None,
            in_ci_step: false,
        };
        let s = score(&ctx, &c, &r);
        // 40 + 30 + 10 + 10 = 90, but only one kind of link: capped below both bands.
        assert_eq!(s.total, 59, "{s:?}");
        assert!(s.cap.as_deref().unwrap().contains("second"), "{:?}", s.cap);
    }

    #[test]
    fn presubmit_gaps() {
        let job = "periodic-ci-openshift-release-main-ci-4.22-e2e-aws-ovn-techpreview";
        assert!(presubmit_gap(job, &["pull-ci-openshift-installer-main-e2e-aws-ovn".into()]).is_some());
        assert!(presubmit_gap(job, &["pull-ci-openshift-installer-main-e2e-aws-ovn-techpreview".into()]).is_none());
        assert!(presubmit_gap(job, &[]).is_none());
    }
}
