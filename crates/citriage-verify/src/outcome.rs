//! What the verifier says, and the context its checks write into: the rule catalogue
//! ([`RULES`]), findings, the claims with their verdicts, what could not be checked,
//! the run's figures and the whole [`Verification`]. The check modules (`rules`,
//! `builds`, `content`, `refcheck`, `wording`) all write through [`Ctx`]; this module
//! imports none of them.

use crate::report::Report;
use citriage_model::Evidence;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    /// A false statement about the world: a PR state, a line's content, a build, a commit.
    Error,
    /// A runbook rule the report breaks (structure, wording, depth).
    Warning,
    /// Right when written, out of date now (a line that moved since the cited commit).
    Note,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

/// One rule of the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RuleInfo {
    pub id: &'static str,
    /// Where the runbook asks for it.
    pub source: &'static str,
    pub text: &'static str,
    pub severity: Severity,
}

const fn rule(id: &'static str, source: &'static str, text: &'static str, severity: Severity) -> RuleInfo {
    RuleInfo { id, source, text, severity }
}

/// Every rule the verifier applies, in report order.
pub const RULES: &[RuleInfo] = &[
    rule("ref-exists", "rule 1; Phase 9 #1; Appendix D", "Every cited PR or issue exists and its state was checked", Severity::Error),
    rule(
        "ref-state",
        "rule 5; Phase 5; Appendix D",
        "A state given to a PR or issue (merged, closed, open, draft, ✅ ❌ 🟢 🟡) held on the report's date",
        Severity::Error,
    ),
    rule(
        "ref-labels",
        "Phase 5; Appendix D",
        "Labels and readiness given to a PR (lgtm, approved, hold, needs-rebase, waiting on tide) held on the report's date",
        Severity::Error,
    ),
    rule("ref-kind", "Phase 5", "What is called a PR is a pull request, what is called an issue is an issue", Severity::Error),
    rule("commit", "rule 13; Appendix D", "Every cited commit exists in its repository", Severity::Error),
    rule("file-line", "rule 2; Appendix D", "Every path:line resolves in the named checkout", Severity::Error),
    rule(
        "file-content",
        "rule 2; Appendix D",
        "What the report quotes or names at a path:line is on that line (or the function it sits in)",
        Severity::Error,
    ),
    rule(
        "file-drift",
        "rule 2",
        "A quote that matched at the cited commit is still at the cited line",
        Severity::Note,
    ),
    rule("build-url", "rule 3; Appendix D", "Every cited build is in the ledger", Severity::Error),
    rule("build-result", "rule 3", "A build called passing or failing ended that way", Severity::Error),
    rule("tldr", "Phase 7; Appendix B", "The report has a TL;DR", Severity::Warning),
    rule("tldr-takeaways", "Phase 7; Phase 9 #6", "The TL;DR lists at most 3 takeaways", Severity::Warning),
    rule("tldr-tier0", "Phase 7; Phase 9 #6; Appendix D", "Whatever the TL;DR calls shipped is listed in Tier 0", Severity::Warning),
    rule("placeholder", "Phase 9 #2", "No TODO, TBD or {template} slot remains outside code", Severity::Warning),
    rule("hedge", "Appendix D", "No presumably / likely / should-clear in root-cause text or tier rows without an uncertainty marker", Severity::Warning),
    rule(
        "tier-columns",
        "Phase 7; Phase 9 #3",
        "Tier tables keep one column set per table, and Tier 0-3 tables have a Status column",
        Severity::Warning,
    ),
    rule("tier0-evidence", "Phase 7; Phase 9 #13", "Every Tier 0 (done) row cites its evidence: a PR, commit, build or path:line", Severity::Warning),
    rule("fix-shape", "rule 12; Phase 9 #9", "Every Tier 1/2 row carries a PR or a concrete change (file:line, code, diff sketch)", Severity::Warning),
    rule("uncertainty", "rule 8; Phase 9 #5; Appendix D", "An honest-uncertainty section lists at least 3 things that were not verified", Severity::Warning),
    rule("lessons", "rule 11; Phase 9 #10", "A Lessons section appears only with a prior report, and each lesson quotes it", Severity::Warning),
    rule("misclassified-section", "Phase 7; Phase 9 #4", "A misclassifications section exists and is populated or says none were found", Severity::Warning),
    rule("tier-sections", "Appendix D", "Tier 4 (governance) and Tier 5 (deletion / don't bother) sections exist", Severity::Warning),
    rule("pattern-count", "Phase 9 #12", "At least 8 pattern sections", Severity::Warning),
    rule("pattern-depth", "Phase 7; Phase 9 #7", "Each pattern cites at least 3 file:line and 1 build URL across itself and its sub-patterns", Severity::Warning),
    rule(
        "causal-chain",
        "rule 13; Phase 9 #8",
        "Each pattern names its causal chain (commit, PR, path:line, dated or versioned change) or says it is unknown",
        Severity::Warning,
    ),
];

/// The catalogue entry of a rule id.
pub fn rule_info(id: &str) -> RuleInfo {
    RULES.iter().copied().find(|r| r.id == id).unwrap_or(rule("unknown", "", "", Severity::Warning))
}

/// Something the report gets wrong.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Finding {
    /// 1-based report line.
    pub line: usize,
    pub rule_id: String,
    pub severity: Severity,
    /// The rule's text and where the runbook asks for it.
    pub rule: String,
    pub message: String,
    pub evidence: Vec<Evidence>,
}

/// Something the verifier could not check, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Unchecked {
    pub line: usize,
    /// `ref`, `file-line`, `build-url`, `commit`, `claim`, `causal-chain`.
    pub kind: String,
    pub what: String,
    pub why: String,
    /// Further lines citing the same thing.
    pub other_lines: Vec<usize>,
}

/// A claim's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Verified,
    False,
    Unchecked,
}

/// One claim the report makes about the world, as the verifier judged it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ClaimRecord {
    pub line: usize,
    /// `ref-state`, `ref-labels`, `ref-kind`, `commit`, `file-line`, `file-content`,
    /// `file-change` (a commit said to have changed a `path:line`), `build-url`,
    /// `build-result`.
    pub kind: String,
    /// What the claim is about (`k/k#1`, `pkg/a.go:12`, a build URL, a SHA).
    pub subject: String,
    /// What is claimed (`merged`, `labelled lgtm`, ``shows `x` ``, `passed`).
    pub claim: String,
    /// The report's words that make the claim.
    pub words: String,
    pub verdict: Verdict,
    /// What was found, or why it could not be checked.
    pub detail: String,
    pub evidence: Vec<Evidence>,
}

/// How a rule came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckStatus {
    Passed,
    Failed,
    /// Nothing flagged, but some items could not be checked.
    Incomplete,
    NotApplicable,
}

/// One rule's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckSummary {
    pub rule_id: String,
    pub status: CheckStatus,
    pub findings: usize,
    pub unchecked: usize,
    /// Why a rule does not apply, or what it counted.
    pub note: String,
}

/// Figures about the report and the run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    pub lines: usize,
    pub format: String,
    /// The day claims are judged as of (`YYYY-MM-DD`), when the report gives one.
    pub as_of: Option<String>,
    pub sections: usize,
    pub patterns: usize,
    pub sub_patterns: usize,
    /// Reference occurrences and distinct references.
    pub refs_found: usize,
    pub refs_distinct: usize,
    pub refs_checked: usize,
    pub refs_unchecked: usize,
    pub refs_ambiguous: usize,
    /// `path:line` occurrences, distinct claims, distinct claims that resolved.
    pub file_lines_found: usize,
    pub file_lines_distinct: usize,
    pub file_lines_resolved: usize,
    /// Build citation occurrences, distinct builds, distinct builds known to the ledger.
    pub build_urls_found: usize,
    pub build_urls_distinct: usize,
    pub build_urls_known: usize,
    pub bare_build_ids: usize,
    pub commits_distinct: usize,
    /// Claims by verdict.
    pub claims_verified: usize,
    pub claims_false: usize,
    pub claims_unchecked: usize,
}

/// What could not be checked, grouped: kind, reason, how many.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct NotCheckedGroup {
    pub kind: String,
    pub why: String,
    pub count: usize,
    /// Up to five examples.
    pub examples: Vec<String>,
}

/// The verifier's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verification {
    pub findings: Vec<Finding>,
    pub unchecked: Vec<Unchecked>,
    pub claims: Vec<ClaimRecord>,
    pub checks: Vec<CheckSummary>,
    pub stats: Stats,
}

impl Verification {
    /// True when nothing was flagged and nothing was left unchecked.
    pub fn passed(&self) -> bool {
        self.findings.is_empty() && self.unchecked.is_empty()
    }

    /// `pass`, `fail` (findings) or `incomplete` (nothing flagged, something unchecked).
    pub fn verdict(&self) -> &'static str {
        if !self.findings.is_empty() {
            "fail"
        } else if !self.unchecked.is_empty() {
            "incomplete"
        } else {
            "pass"
        }
    }

    /// The process exit code: 1 when anything is flagged; an unverified claim is not a
    /// verified one, so unchecked items also give 1 unless `allow_unchecked`.
    pub fn exit_code(&self, allow_unchecked: bool) -> i32 {
        if !self.findings.is_empty() || (!allow_unchecked && !self.unchecked.is_empty()) {
            1
        } else {
            0
        }
    }

    /// Findings of one rule.
    pub fn findings_of(&self, rule_id: &str) -> Vec<&Finding> {
        self.findings.iter().filter(|f| f.rule_id == rule_id).collect()
    }

    /// One rule's summary.
    pub fn check(&self, rule_id: &str) -> Option<&CheckSummary> {
        self.checks.iter().find(|c| c.rule_id == rule_id)
    }

    /// The unchecked items grouped by kind and reason, largest groups first.
    pub fn not_checked_summary(&self) -> Vec<NotCheckedGroup> {
        let mut groups: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
        for u in &self.unchecked {
            // Reasons that name the item are grouped by their general part.
            let why = general_reason(&u.why);
            groups.entry((u.kind.clone(), why)).or_default().push(u.what.clone());
        }
        let mut out: Vec<NotCheckedGroup> = groups
            .into_iter()
            .map(|((kind, why), whats)| NotCheckedGroup {
                kind,
                why,
                count: whats.len(),
                examples: whats.into_iter().take(5).collect(),
            })
            .collect();
        out.sort_by(|a, b| b.count.cmp(&a.count).then(a.kind.cmp(&b.kind)).then(a.why.cmp(&b.why)));
        out
    }
}

/// A reason without the specifics of one item (`no build of ci-x is in the ledger` →
/// `no build of this job is in the ledger`).
fn general_reason(why: &str) -> String {
    static R: OnceLock<Vec<(Regex, &'static str)>> = OnceLock::new();
    let rules = R.get_or_init(|| {
        vec![
            (Regex::new(r"no build of \S+ (is in the ledger|was ingested.*)").expect("re"), "no build of this job $1"),
            (Regex::new(r"^\S+ is not in any named checkout").expect("re"), "the path is not in any named checkout"),
            (Regex::new(r"^no checkout was named for \S+").expect("re"), "no checkout was named for its repository"),
            (
                Regex::new(r"^ambiguous: `[^`]+` is not a known repository.*").expect("re"),
                "ambiguous: a short repository name that is not known (write owner/repo#N)",
            ),
            (
                Regex::new(r"^[0-9]+ files end with .*").expect("re"),
                "several files end with the path (write a longer path)",
            ),
            (
                Regex::new(r"^names one change \(.*").expect("re"),
                "names one change and does not say the other half is unknown",
            ),
            (
                Regex::new(r"^\x22[^\x22]+\x22 could describe .*").expect("re"),
                "a state word that could describe several references",
            ),
        ]
    });
    for (re, rep) in rules {
        if re.is_match(why) {
            return re.replace(why, *rep).to_string();
        }
    }
    why.to_string()
}

/// Where the checks write what they find.
pub(crate) struct Ctx<'a> {
    pub report: &'a Report,
    pub findings: Vec<Finding>,
    pub unchecked: Vec<Unchecked>,
    pub claims: Vec<ClaimRecord>,
    pub na: BTreeMap<&'static str, String>,
    pub notes: BTreeMap<&'static str, String>,
}

impl Ctx<'_> {
    pub fn flag(&mut self, line: usize, id: &'static str, message: String, evidence: Vec<Evidence>) {
        let r = rule_info(id);
        self.findings.push(Finding {
            line,
            rule_id: id.to_string(),
            severity: r.severity,
            rule: format!("{} ({})", r.text, r.source),
            message,
            evidence,
        });
    }

    pub fn skip(&mut self, line: usize, kind: &str, what: String, why: String, other_lines: Vec<usize>) {
        self.unchecked.push(Unchecked { line, kind: kind.to_string(), what, why, other_lines });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_group() {
        assert_eq!(general_reason("no build of ci-x is in the ledger"), "no build of this job is in the ledger");
        assert_eq!(general_reason("offline: no cached answer"), "offline: no cached answer");
    }
}
