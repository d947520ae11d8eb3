//! The checks a triage report must pass, from the runbook's anti-hallucination rules,
//! its Phase 9 self-check and its Appendix D checklist. Claims about the outside world
//! go through traits — [`RefResolver`] for PR/issue state, timelines and commits,
//! [`CodeResolver`] for `path:line` and commits in checkouts, [`BuildUrlResolver`] for
//! builds — and whatever they cannot answer is reported as *not checked* with the
//! reason, never passed and never accused. Every claim the verifier read is listed
//! with its verdict (verified, false, unchecked) and evidence; every finding names the
//! report line, the rule, its severity and the evidence. Output is sorted and
//! deterministic.

use crate::builds::bare_build_ids;
pub use crate::builds::{
    extract_build_urls, parse_build_url, BuildAnswer, BuildUrl, BuildUrlResolver, KnownBuilds, NoBuilds,
};
use crate::code::CodeResolver;
pub use crate::content::{extract_file_lines, FileLineRef};
pub use crate::refcheck::Window;
use crate::report::{code_spans, parse, Report, ReportFormat, Section, SectionKind};
use citriage_github::{extract_refs, FoundRef, IssueRef, RefContext, RefResolver, RefState, RefTarget};
use citriage_model::{Day, Evidence};
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
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
    /// `build-url`, `build-result`.
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

// ---- options ----------------------------------------------------------------------------

/// What the verifier is told about the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyOptions {
    pub refs: RefContext,
    /// A prior report was given (allows a Lessons section).
    pub prior_report: bool,
    pub max_takeaways: usize,
    pub min_uncertainty: usize,
    pub min_patterns: usize,
    pub min_file_lines: usize,
    pub min_build_urls: usize,
    /// The day the report's claims describe; `None`: the date the report gives, else
    /// the state as read.
    pub as_of: Option<Day>,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            refs: RefContext::kubernetes(),
            prior_report: false,
            max_takeaways: 3,
            min_uncertainty: 3,
            min_patterns: 8,
            min_file_lines: 3,
            min_build_urls: 1,
            as_of: None,
        }
    }
}

/// The outside state the checks consult.
pub struct Resolvers<'a> {
    pub refs: &'a dyn RefResolver,
    pub code: &'a dyn CodeResolver,
    pub builds: &'a dyn BuildUrlResolver,
}

// ---- the checks -------------------------------------------------------------------------

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

fn section_text(r: &Report, s: &Section) -> String {
    (s.line..=s.end).map(|n| r.line(n)).collect::<Vec<_>>().join("\n")
}

/// The day a report describes: its `Date:` line, else an `as of YYYY-MM-DD`, else a date
/// in its title.
pub fn report_date(r: &Report) -> Option<Day> {
    static DATE: OnceLock<Regex> = OnceLock::new();
    static AS_OF: OnceLock<Regex> = OnceLock::new();
    let date = DATE.get_or_init(|| Regex::new(r"(?i)\bdate\b\W{0,6}([0-9]{4}-[0-9]{2}-[0-9]{2})").expect("re"));
    let as_of = AS_OF.get_or_init(|| Regex::new(r"(?i)\bas of\s+([0-9]{4}-[0-9]{2}-[0-9]{2})").expect("re"));
    let head = r.lines.iter().take(30);
    for l in head.clone() {
        if let Some(d) = date.captures(l).and_then(|c| Day::parse(&c[1])) {
            return Some(d);
        }
    }
    for l in r.lines.iter().take(200) {
        if let Some(d) = as_of.captures(l).and_then(|c| Day::parse(&c[1])) {
            return Some(d);
        }
    }
    r.sections.iter().find(|s| s.kind == SectionKind::Title).and_then(|s| Day::find_in(&s.title))
}

/// Verifies report text.
pub fn verify(text: &str, resolvers: &Resolvers<'_>, opts: &VerifyOptions) -> Verification {
    verify_report(&parse(text), resolvers, opts)
}

/// Verifies a parsed report.
pub fn verify_report(report: &Report, resolvers: &Resolvers<'_>, opts: &VerifyOptions) -> Verification {
    let mut cx = Ctx {
        report,
        findings: Vec::new(),
        unchecked: Vec::new(),
        claims: Vec::new(),
        na: BTreeMap::new(),
        notes: BTreeMap::new(),
    };
    let text = report.lines.join("\n");
    let refs = extract_refs(&text, &opts.refs);
    let file_lines = extract_file_lines(report);
    let builds = extract_build_urls(report);
    let all_builds = crate::builds::extract_builds(report);
    let commits = crate::content::extract_commits(report, &opts.refs);
    let day = opts.as_of.or_else(|| report_date(report));
    let mut stats = Stats {
        lines: report.lines.len(),
        format: match report.format {
            ReportFormat::Markdown => "markdown".into(),
            ReportFormat::Rendered => "rendered".into(),
        },
        as_of: day.map(|d| d.to_string()),
        sections: report.sections.len(),
        patterns: report.patterns().len(),
        sub_patterns: report.sections_of(SectionKind::SubPattern).len(),
        refs_found: refs.len(),
        file_lines_found: file_lines.len(),
        build_urls_found: all_builds.len(),
        bare_build_ids: report.lines.iter().map(|l| crate::builds::bare_build_ids(l)).sum(),
        commits_distinct: commits.iter().map(|c| &c.sha).collect::<BTreeSet<_>>().len(),
        ..Default::default()
    };

    let states = check_refs(&mut cx, &refs, resolvers.refs, &mut stats);
    crate::refcheck::check_state_claims(&mut cx, &refs, &states, resolvers.refs, day.map(Window::of_day));
    crate::content::check_file_lines(&mut cx, &file_lines, resolvers.code, &mut stats, day, &opts.refs);
    crate::content::check_commits(
        &mut cx,
        &commits,
        resolvers.code,
        resolvers.refs,
        opts.refs.default_repo.as_ref(),
        day,
    );
    crate::builds::check_builds(&mut cx, resolvers.builds, &mut stats);
    check_tldr(&mut cx, &refs, opts);
    crate::wording::check_placeholders(&mut cx);
    crate::wording::check_hedges(&mut cx, &refs);
    check_tiers(&mut cx, &refs, &file_lines);
    check_sections(&mut cx, opts);
    check_patterns(&mut cx, &file_lines, &builds, &refs, opts);

    let mut findings = cx.findings;
    findings.sort();
    findings.dedup();
    let mut unchecked = cx.unchecked;
    unchecked.sort();
    unchecked.dedup();
    let mut claims = cx.claims;
    claims.sort();
    claims.dedup();
    stats.claims_verified = claims.iter().filter(|c| c.verdict == Verdict::Verified).count();
    stats.claims_false = claims.iter().filter(|c| c.verdict == Verdict::False).count();
    stats.claims_unchecked = claims.iter().filter(|c| c.verdict == Verdict::Unchecked).count();
    let checks = RULES
        .iter()
        .map(|r| {
            let nf = findings.iter().filter(|f| f.rule_id == r.id).count();
            let kinds: &[&str] = match r.id {
                "ref-exists" => &["ref"],
                "ref-state" | "ref-labels" | "ref-kind" => &["claim"],
                "file-line" => &["file-line"],
                "build-url" => &["build-url"],
                "commit" => &["commit"],
                "causal-chain" => &["causal-chain"],
                _ => &[],
            };
            let nu = unchecked
                .iter()
                .filter(|u| kinds.contains(&u.kind.as_str()))
                .filter(|u| u.kind != "claim" || claims.iter().any(|c| c.line == u.line && c.kind == r.id))
                .count();
            let (status, note) = if nf > 0 {
                (CheckStatus::Failed, cx.notes.get(r.id).cloned().unwrap_or_default())
            } else if let Some(why) = cx.na.get(r.id) {
                (CheckStatus::NotApplicable, why.clone())
            } else if nu > 0 {
                (CheckStatus::Incomplete, format!("{nu} item(s) could not be checked"))
            } else {
                (CheckStatus::Passed, cx.notes.get(r.id).cloned().unwrap_or_default())
            };
            CheckSummary { rule_id: r.id.to_string(), status, findings: nf, unchecked: nu, note }
        })
        .collect();
    Verification { findings, unchecked, claims, checks, stats }
}

/// Resolves each distinct reference once; flags references that do not exist and lists
/// the ones that could not be checked.
fn check_refs(
    cx: &mut Ctx<'_>,
    refs: &[FoundRef],
    resolver: &dyn RefResolver,
    stats: &mut Stats,
) -> BTreeMap<IssueRef, RefState> {
    let mut lines_of: BTreeMap<IssueRef, Vec<(usize, String)>> = BTreeMap::new();
    let mut ambiguous: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for f in refs {
        match &f.target {
            RefTarget::Resolved { reference, .. } => {
                lines_of.entry(reference.clone()).or_default().push((f.line, f.raw.clone()))
            }
            RefTarget::Ambiguous { why, .. } => ambiguous.entry((f.raw.clone(), why.clone())).or_default().push(f.line),
        }
    }
    let mut states = BTreeMap::new();
    for (r, lines) in &lines_of {
        let state = resolver.resolve(r);
        let (first, raw) = lines[0].clone();
        let mut others: Vec<usize> = lines.iter().skip(1).map(|(l, _)| *l).collect();
        others.dedup();
        others.retain(|l| *l != first);
        let shown = if raw == r.to_string() { r.to_string() } else { format!("{r} (written `{raw}`)") };
        match &state {
            RefState::NotFound { .. } => {
                stats.refs_checked += 1;
                let also =
                    if others.is_empty() { String::new() } else { format!(" (also cited on lines {})", join(&others)) };
                cx.flag(
                    first,
                    "ref-exists",
                    format!("{shown} does not exist (GitHub answered 404){also}"),
                    state.evidence().into_iter().collect(),
                );
            }
            s if !s.is_checked() => {
                stats.refs_unchecked += 1;
                cx.skip(first, "ref", shown, s.unknown_reason().unwrap_or("not checked").to_string(), others);
            }
            _ => stats.refs_checked += 1,
        }
        states.insert(r.clone(), state);
    }
    stats.refs_distinct = lines_of.len();
    for ((raw, why), lines) in ambiguous {
        stats.refs_ambiguous += 1;
        stats.refs_unchecked += 1;
        cx.skip(lines[0], "ref", format!("`{raw}`"), format!("ambiguous: {why}"), lines[1..].to_vec());
    }
    states
}

fn join(v: &[usize]) -> String {
    v.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(", ")
}

fn takeaway_items(r: &Report, s: &Section) -> Vec<usize> {
    let items = r.items_in(s);
    let min_indent = items.iter().map(|i| i.indent).min().unwrap_or(0);
    let top: Vec<&&crate::report::ListItem> = items.iter().filter(|i| i.indent <= min_indent + 1).collect();
    let ordered: Vec<usize> = top.iter().filter(|i| i.number.is_some()).map(|i| i.line).collect();
    if ordered.is_empty() {
        top.iter().map(|i| i.line).collect()
    } else {
        ordered
    }
}

fn check_tldr(cx: &mut Ctx<'_>, refs: &[FoundRef], opts: &VerifyOptions) {
    let tldrs: Vec<Section> = cx.report.sections_of(SectionKind::TlDr).into_iter().cloned().collect();
    let Some(tl) = tldrs.first() else {
        let line = cx.report.sections_of(SectionKind::Title).first().map(|s| s.line).unwrap_or(1);
        cx.flag(line, "tldr", "the report has no TL;DR section".into(), Vec::new());
        cx.na.insert("tldr-takeaways", "no TL;DR section".into());
        cx.na.insert("tldr-tier0", "no TL;DR section".into());
        return;
    };
    let items = takeaway_items(cx.report, tl);
    cx.notes.insert("tldr-takeaways", format!("{} takeaway(s)", items.len()));
    if items.len() > opts.max_takeaways {
        cx.flag(
            items[opts.max_takeaways],
            "tldr-takeaways",
            format!(
                "the TL;DR lists {} takeaways (lines {}); at most {} are allowed",
                items.len(),
                join(&items),
                opts.max_takeaways
            ),
            Vec::new(),
        );
    }
    // Shipped claims in the TL;DR versus Tier 0.
    let tier0: Vec<Section> = cx.report.sections_of(SectionKind::Tier(0)).into_iter().cloned().collect();
    let in_tier0 = |f: &FoundRef| {
        refs.iter().any(|g| {
            tier0.iter().any(|s| s.contains(g.line))
                && match (f.reference(), g.reference()) {
                    (Some(a), Some(b)) => a == b,
                    _ => f.number() == g.number(),
                }
        })
    };
    let tl_refs: Vec<FoundRef> = refs.iter().filter(|f| tl.contains(f.line)).cloned().collect();
    let mut seen = BTreeSet::new();
    for (c, found) in crate::refcheck::report_claims(cx.report, &tl_refs) {
        let shipped = matches!(c.claimed, crate::claims::Claimed::Merged | crate::claims::Claimed::Done) && !c.negated;
        if !shipped || c.modality != crate::prose::Modality::Asserted || c.ambiguous {
            continue;
        }
        for t in &c.targets {
            let f = &found[*t];
            if !in_tier0(f) && seen.insert((c.line, f.raw.clone())) {
                let why = if tier0.is_empty() { "there is no Tier 0 section" } else { "Tier 0 does not list it" };
                cx.flag(c.line, "tldr-tier0", format!("the TL;DR calls {} shipped but {why}", f.raw), Vec::new());
            }
        }
    }
}

fn sha_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(r"\b[0-9a-f]{7,40}\b").expect("static regex"))
}

fn has_concrete_change(line: &str, refs_on_line: bool, file_line_on_line: bool) -> bool {
    refs_on_line
        || file_line_on_line
        || !code_spans(line).is_empty()
        || line.contains('→')
        || line.contains("->")
        || sha_re().find_iter(line).any(|m| {
            m.as_str().bytes().any(|b| b.is_ascii_digit()) && m.as_str().bytes().any(|b| b.is_ascii_alphabetic())
        })
}

fn check_tiers(cx: &mut Ctx<'_>, refs: &[FoundRef], file_lines: &[FileLineRef]) {
    if cx.report.format == ReportFormat::Rendered {
        let why = "rendered text: table cells and code spans are not recoverable";
        cx.na.insert("tier-columns", why.into());
        cx.na.insert("fix-shape", why.into());
        cx.na.insert("tier0-evidence", why.into());
        return;
    }
    let tiers: Vec<Section> =
        cx.report.sections.iter().filter(|s| matches!(s.kind, SectionKind::Tier(_))).cloned().collect();
    if tiers.is_empty() {
        cx.na.insert("tier-columns", "no tier sections".into());
        cx.na.insert("fix-shape", "no tier sections".into());
        cx.na.insert("tier0-evidence", "no tier sections".into());
        return;
    }
    let ref_lines: BTreeSet<usize> = refs.iter().map(|f| f.line).collect();
    let fl_lines: BTreeSet<usize> = file_lines.iter().map(|f| f.line).collect();
    let mut rows_checked = 0;
    for s in &tiers {
        let SectionKind::Tier(n) = s.kind else { continue };
        let tables: Vec<crate::report::Table> = cx.report.tables_in(s).into_iter().cloned().collect();
        for t in &tables {
            for row in &t.rows {
                if row.cells.len() != t.header.len() {
                    cx.flag(
                        row.line,
                        "tier-columns",
                        format!(
                            "Tier {n} row has {} cells; its table's header (line {}) has {}",
                            row.cells.len(),
                            t.line,
                            t.header.len()
                        ),
                        Vec::new(),
                    );
                }
            }
            if n <= 3 && !t.header.iter().any(|h| h.to_ascii_lowercase().contains("status")) {
                cx.flag(
                    t.line,
                    "tier-columns",
                    format!("Tier {n} table has no Status column (header: {})", t.header.join(" | ")),
                    Vec::new(),
                );
            }
        }
        if n == 0 {
            let rows: Vec<(usize, String)> = if tables.is_empty() {
                cx.report.items_in(s).iter().map(|i| (i.line, i.text.clone())).collect()
            } else {
                tables
                    .iter()
                    .flat_map(|t| {
                        t.rows.iter().map(|r| {
                            (r.line, r.cells.iter().skip(1).find(|c| !c.is_empty()).cloned().unwrap_or_default())
                        })
                    })
                    .collect()
            };
            for (line, first_cell) in rows {
                let lc = first_cell.trim_start().to_ascii_lowercase();
                if lc.starts_with("none") || lc.starts_with("no ") || lc.starts_with("nothing") {
                    continue;
                }
                let text = cx.report.line(line);
                let evidence = ref_lines.contains(&line)
                    || fl_lines.contains(&line)
                    || text.contains("://")
                    || crate::builds::bare_build_ids(text) > 0
                    || text.contains("ev-")
                    || sha_re().find_iter(text).any(|m| {
                        m.as_str().bytes().any(|b| b.is_ascii_digit())
                            && m.as_str().bytes().any(|b| b.is_ascii_alphabetic())
                    });
                if !evidence {
                    cx.flag(
                        line,
                        "tier0-evidence",
                        format!(
                            "Tier 0 row calls something done but cites no PR, commit, build or path:line: \"{}\"",
                            first_cell.chars().take(80).collect::<String>()
                        ),
                        Vec::new(),
                    );
                }
            }
        }
        if n == 1 || n == 2 {
            let mut rows: Vec<(usize, String, String)> = tables
                .iter()
                .flat_map(|t| {
                    t.rows.iter().map(|r| {
                        (
                            r.line,
                            r.cells.iter().skip(1).find(|c| !c.is_empty()).cloned().unwrap_or_default(),
                            cx.report.line(r.line).to_string(),
                        )
                    })
                })
                .collect();
            if tables.is_empty() {
                rows = cx
                    .report
                    .items_in(s)
                    .iter()
                    .map(|i| (i.line, i.text.clone(), cx.report.line(i.line).to_string()))
                    .collect();
            }
            for (line, first_cell, text) in rows {
                let lc = first_cell.trim_start().to_ascii_lowercase();
                if lc.starts_with("none") || lc.starts_with("no ") {
                    continue;
                }
                rows_checked += 1;
                if !has_concrete_change(&text, ref_lines.contains(&line), fl_lines.contains(&line)) {
                    cx.flag(
                        line,
                        "fix-shape",
                        format!(
                            "Tier {n} row names neither a PR nor a concrete change (file:line, `code`, → diff): \"{}\"",
                            first_cell.chars().take(80).collect::<String>()
                        ),
                        Vec::new(),
                    );
                }
            }
        }
    }
    cx.notes.insert("fix-shape", format!("{rows_checked} Tier 1/2 row(s) checked"));
}

fn quote_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(r#""[^"]{8,}"|“[^”]{8,}”|^\s*>"#).expect("static regex"))
}

fn check_sections(cx: &mut Ctx<'_>, opts: &VerifyOptions) {
    let r = cx.report;
    // Honest uncertainty.
    let unc: Vec<Section> = r.sections_of(SectionKind::Uncertainty).into_iter().cloned().collect();
    if unc.is_empty() {
        let line = r.sections_of(SectionKind::Verifications).first().map(|s| s.line).unwrap_or(1);
        cx.flag(
            line,
            "uncertainty",
            "no honest-uncertainty section (\"Still open\", \"could not verify\")".into(),
            Vec::new(),
        );
    } else {
        let best = unc.iter().map(|s| (r.items_in(s).len(), s.line)).max().unwrap_or((0, 1));
        cx.notes.insert("uncertainty", format!("{} item(s)", best.0));
        if best.0 < opts.min_uncertainty {
            cx.flag(
                best.1,
                "uncertainty",
                format!(
                    "the uncertainty section lists {} item(s); at least {} are required",
                    best.0, opts.min_uncertainty
                ),
                Vec::new(),
            );
        }
    }
    // Lessons only with a prior report.
    let lessons: Vec<Section> = r.sections_of(SectionKind::Lessons).into_iter().cloned().collect();
    for s in &lessons {
        if !opts.prior_report {
            cx.flag(
                s.line,
                "lessons",
                "a Lessons section without a prior report: the corrections cannot quote anything real".into(),
                Vec::new(),
            );
        } else {
            for item in r.items_in(s) {
                if !quote_re().is_match(r.line(item.line)) {
                    cx.flag(
                        item.line,
                        "lessons",
                        "the lesson does not quote the prior report's claim it corrects".into(),
                        Vec::new(),
                    );
                }
            }
        }
    }
    if lessons.is_empty() {
        cx.na.insert(
            "lessons",
            if opts.prior_report {
                "no Lessons section (optional)".into()
            } else {
                "no prior report and no Lessons section".into()
            },
        );
    }
    // Misclassifications.
    match r.sections_of(SectionKind::Misclassifications).first() {
        None => cx.flag(1, "misclassified-section", "no misclassifications section".into(), Vec::new()),
        Some(s) => {
            let rows: usize = r.tables_in(s).iter().map(|t| t.rows.len()).sum();
            let items = r.items_in(s).len();
            let says_none = section_text(r, s).to_ascii_lowercase().contains("none");
            if rows == 0 && items == 0 && !says_none && r.format == ReportFormat::Markdown {
                cx.flag(
                    s.line,
                    "misclassified-section",
                    "the misclassifications section is empty and does not say none were found".into(),
                    Vec::new(),
                );
            }
        }
    }
    // Tier 4 and 5.
    let has = |n: u8| r.sections.iter().any(|s| s.kind == SectionKind::Tier(n));
    let anchor = r.sections_of(SectionKind::ActionPlan).first().map(|s| s.line).unwrap_or(1);
    for n in [4u8, 5] {
        if !has(n) {
            cx.flag(anchor, "tier-sections", format!("no Tier {n} section"), Vec::new());
        }
    }
}

fn snapshot_only_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"(?i)snapshot-only (?:triage|report|run)|snapshot-only: no builds|no builds were ingested|build logs?\b[^.]{0,60}\b(?:were|was) not (?:read|fetched)").expect("static regex")
    })
}

fn line_word_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(r"\bline ~?([0-9]{1,6})\b").expect("static regex"))
}

/// The source lines a section cites: each line of a `path:line` (`a.go:3306,3458` is
/// two), and `line N` written after a citation on the same report line (`reconciler.go:
/// 2017-2034 times out (t.Fatalf at line 2033)`), which names a line of that file.
fn cited_lines<'a>(
    r: &Report,
    s: &Section,
    file_lines: &'a [FileLineRef],
) -> BTreeSet<(Option<&'a str>, &'a str, usize)> {
    let mut out = BTreeSet::new();
    for f in file_lines.iter().filter(|f| s.contains(f.line)) {
        out.insert((f.repo.as_deref(), f.path.as_str(), f.start));
        for m in &f.more {
            out.insert((f.repo.as_deref(), f.path.as_str(), *m));
        }
    }
    for n in s.line..=s.end {
        let on_line: Vec<&FileLineRef> = file_lines.iter().filter(|f| f.line == n).collect();
        if on_line.is_empty() {
            continue;
        }
        let text = r.line(n);
        for c in line_word_re().captures_iter(text) {
            let at = c.get(0).map(|m| m.start()).unwrap_or(0);
            let Some(f) = on_line.iter().filter(|f| f.span.1 <= at).max_by_key(|f| f.span.1) else { continue };
            if let Some(k) = c.get(1).and_then(|m| m.as_str().parse::<usize>().ok()) {
                out.insert((f.repo.as_deref(), f.path.as_str(), k));
            }
        }
    }
    out
}

fn check_patterns(
    cx: &mut Ctx<'_>,
    file_lines: &[FileLineRef],
    builds: &[(usize, BuildUrl)],
    refs: &[FoundRef],
    opts: &VerifyOptions,
) {
    let r = cx.report;
    let patterns: Vec<Section> = r.patterns().into_iter().cloned().collect();
    let anchor = r.sections_of(SectionKind::Patterns).first().map(|s| s.line).unwrap_or(1);
    cx.notes.insert("pattern-count", format!("{} pattern(s)", patterns.len()));
    if patterns.len() < opts.min_patterns {
        cx.flag(
            anchor,
            "pattern-count",
            format!("{} pattern section(s); at least {} are required", patterns.len(), opts.min_patterns),
            Vec::new(),
        );
    }
    if patterns.is_empty() {
        cx.na.insert("pattern-depth", "no pattern sections".into());
        cx.na.insert("causal-chain", "no pattern sections".into());
        return;
    }
    // A report that cites no build at all and says it read no build logs (citriage's
    // snapshot-only triage) makes no log-level claims: depth does not apply. A report
    // with no build URLs that does not say so fails the depth rule.
    let declared = r.lines.iter().position(|l| snapshot_only_re().is_match(l));
    if builds.is_empty() {
        if let Some(i) = declared {
            cx.na.insert(
                "pattern-depth",
                format!(
                    "no build evidence: the report cites no build and declares itself snapshot-only (line {})",
                    i + 1
                ),
            );
        }
    }
    // Rendered text keeps link text but loses link targets: a build id shown as text
    // may have been a link, so there it counts as a build citation.
    let rendered = r.format == ReportFormat::Rendered;
    let depth_applies = !cx.na.contains_key("pattern-depth");
    let mut thin = 0;
    for p in &patterns {
        let fl = cited_lines(r, p, file_lines);
        let bu: BTreeSet<&str> = builds.iter().filter(|(l, _)| p.contains(*l)).map(|(_, b)| b.url.as_str()).collect();
        let bare: usize = (p.line..=p.end).map(|n| bare_build_ids(r.line(n))).sum();
        let build_cites = if rendered { bu.len() + bare } else { bu.len() };
        if depth_applies && (fl.len() < opts.min_file_lines || build_cites < opts.min_build_urls) {
            thin += 1;
            let bare_note = match (rendered, bare > 0 && bu.is_empty()) {
                (true, _) if bare > 0 => {
                    format!(" (counting {bare} build id(s) whose link targets the rendered text lost)")
                }
                (false, true) => format!(" ({bare} build id(s) cited without a URL)"),
                _ => String::new(),
            };
            cx.flag(
                p.line,
                "pattern-depth",
                format!(
                    "\"{}\" cites {} file:line (needs {}) and {} build URL(s) (needs {}){bare_note}",
                    p.title.chars().take(70).collect::<String>(),
                    fl.len(),
                    opts.min_file_lines,
                    build_cites,
                    opts.min_build_urls
                ),
                Vec::new(),
            );
        }
    }
    crate::wording::check_causal_chain(cx, &patterns, refs);
    if depth_applies {
        let how = if rendered { "; rendered text: bare build ids count as build citations" } else { "" };
        cx.notes.insert("pattern-depth", format!("{} of {} pattern(s) below the bar{how}", thin, patterns.len()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_dates() {
        let d = |t: &str| report_date(&parse(t)).map(|d| d.to_string());
        assert_eq!(d("# X — Triage Report\n\n**Date**: 2026-05-10 (PM)\n"), Some("2026-05-10".into()));
        assert_eq!(d("# X\n\n| # | Item | Status (as of 2026-05-09) |\n"), Some("2026-05-09".into()));
        assert_eq!(d("# Triage Report 2026-05-08\n\nno date line\n"), Some("2026-05-08".into()));
        assert_eq!(d("# Triage Report\n\nnothing\n"), None);
    }

    #[test]
    fn a_section_cites_each_listed_line_and_lines_named_after_a_citation() {
        let r = parse(
            "### Pattern A — x\n- Root: a/b.go:2017-2034 times out (t.Fatalf at line 2033).\n- `c/d.go:3310,3462` call X.\n- the build log, line 4412.\n",
        );
        let fl = extract_file_lines(&r);
        let got = cited_lines(&r, &r.sections[0], &fl);
        let want: BTreeSet<(Option<&str>, &str, usize)> =
            [(None, "a/b.go", 2017), (None, "a/b.go", 2033), (None, "c/d.go", 3310), (None, "c/d.go", 3462)]
                .into_iter()
                .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn reasons_group() {
        assert_eq!(general_reason("no build of ci-x is in the ledger"), "no build of this job is in the ledger");
        assert_eq!(general_reason("offline: no cached answer"), "offline: no cached answer");
    }
}
