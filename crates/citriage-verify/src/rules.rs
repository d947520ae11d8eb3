//! The checks a triage report must pass, from the runbook's anti-hallucination rules,
//! its Phase 9 self-check and its Appendix D checklist. Checks that need outside
//! state go through traits — [`RefResolver`] for PR/issue state, [`CodeResolver`] for
//! `path:line`, [`BuildUrlResolver`] for build URLs — and whatever they cannot answer
//! is reported as *not checked* with the reason, never passed. Each finding names the
//! report line, the rule and the evidence. Output is sorted and deterministic.

use crate::code::{CodeAnswer, CodeResolver};
use crate::report::{code_spans, parse, without_code, Report, ReportFormat, Section, SectionKind};
use citriage_github::{extract_refs, FoundRef, IssueRef, PrStatus, RefContext, RefResolver, RefState, RefTarget};
use citriage_model::Evidence;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

/// One rule of the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RuleInfo {
    pub id: &'static str,
    /// Where the runbook asks for it.
    pub source: &'static str,
    pub text: &'static str,
}

/// Every rule the verifier applies, in report order.
pub const RULES: &[RuleInfo] = &[
    RuleInfo {
        id: "ref-exists",
        source: "rule 1; Phase 9 #1; Appendix D",
        text: "Every cited PR or issue exists and its state was checked",
    },
    RuleInfo {
        id: "merged-claim",
        source: "rule 5; Appendix D",
        text: "A PR called merged is merged: CLOSED-unmerged and OPEN PRs are not",
    },
    RuleInfo { id: "file-line", source: "rule 2; Appendix D", text: "Every path:line resolves in the named checkout" },
    RuleInfo { id: "build-url", source: "rule 3; Appendix D", text: "Every build URL is in the ledger or fetchable" },
    RuleInfo { id: "tldr-takeaways", source: "Phase 7; Phase 9 #6", text: "The TL;DR lists at most 3 takeaways" },
    RuleInfo {
        id: "tldr-tier0",
        source: "Phase 7; Phase 9 #6; Appendix D",
        text: "Whatever the TL;DR calls shipped is listed in Tier 0",
    },
    RuleInfo { id: "placeholder", source: "Phase 9 #2", text: "No TODO, TBD or placeholder text remains" },
    RuleInfo {
        id: "tier-columns",
        source: "Phase 7; Phase 9 #3",
        text: "Tier tables keep one column set per table, and Tier 0-3 tables have a Status column",
    },
    RuleInfo {
        id: "fix-shape",
        source: "rule 12; Phase 9 #9",
        text: "Every Tier 1/2 row carries a PR or a concrete change (file:line, code, diff sketch)",
    },
    RuleInfo {
        id: "uncertainty",
        source: "rule 8; Phase 9 #5; Appendix D",
        text: "An honest-uncertainty section lists at least 3 things that were not verified",
    },
    RuleInfo {
        id: "lessons",
        source: "rule 11; Phase 9 #10",
        text: "A Lessons section appears only with a prior report, and each lesson quotes it",
    },
    RuleInfo {
        id: "misclassified-section",
        source: "Phase 7; Phase 9 #4",
        text: "A misclassifications section exists and is populated or says none were found",
    },
    RuleInfo {
        id: "tier-sections",
        source: "Appendix D",
        text: "Tier 4 (governance) and Tier 5 (deletion / don't bother) sections exist",
    },
    RuleInfo { id: "pattern-count", source: "Phase 9 #12", text: "At least 8 pattern sections" },
    RuleInfo {
        id: "pattern-depth",
        source: "Phase 7; Phase 9 #7",
        text: "Each pattern cites at least 3 file:line and 1 build URL across itself and its sub-patterns",
    },
    RuleInfo {
        id: "causal-chain",
        source: "rule 13; Phase 9 #8",
        text: "Each pattern names the introducing and the exposing change, or says which is unknown",
    },
];

/// The catalogue entry of a rule id.
pub fn rule_info(id: &str) -> RuleInfo {
    RULES.iter().copied().find(|r| r.id == id).unwrap_or(RuleInfo { id: "unknown", source: "", text: "" })
}

/// Something the report gets wrong.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Finding {
    /// 1-based report line.
    pub line: usize,
    pub rule_id: String,
    /// The rule's text and where the runbook asks for it.
    pub rule: String,
    pub message: String,
    pub evidence: Vec<Evidence>,
}

/// Something the verifier could not check, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Unchecked {
    pub line: usize,
    /// `ref`, `file-line`, `build-url`.
    pub kind: String,
    pub what: String,
    pub why: String,
    /// Further lines citing the same thing.
    pub other_lines: Vec<usize>,
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
    /// Build URL occurrences, distinct builds, distinct builds known to the ledger.
    pub build_urls_found: usize,
    pub build_urls_distinct: usize,
    pub build_urls_known: usize,
    pub bare_build_ids: usize,
}

/// The verifier's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verification {
    pub findings: Vec<Finding>,
    pub unchecked: Vec<Unchecked>,
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
}

// ---- build URLs -------------------------------------------------------------------------

/// A URL that points at one Prow build.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BuildUrl {
    pub url: String,
    pub job: String,
    pub build_id: String,
}

/// Recognises Spyglass (`/view/gs/...`), GCS (`storage.googleapis.com/...`) and gcsweb
/// URLs of a build: a `logs/` or `pr-logs/` path whose job segment is followed by a
/// numeric build id.
pub fn parse_build_url(url: &str) -> Option<BuildUrl> {
    let rest = url.split_once("://")?.1;
    let (host, path) = rest.split_once('/')?;
    if host.ends_with("github.com") {
        return None;
    }
    let path = path.split(['?', '#']).next().unwrap_or("");
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let logs = segs.iter().position(|s| *s == "logs" || *s == "pr-logs")?;
    for i in (logs + 2)..segs.len() {
        let s = segs[i];
        if (10..=20).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit()) {
            return Some(BuildUrl { url: url.to_string(), job: segs[i - 1].to_string(), build_id: s.to_string() });
        }
    }
    None
}

/// The answer to "is this build real?".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum BuildAnswer {
    /// In the ledger (or fetched).
    Known {
        evidence: Option<Evidence>,
    },
    /// Definitely not a build (the ledger knows the job and not this build, or 404).
    Missing {
        why: String,
    },
    Unchecked {
        why: String,
    },
}

/// Anything that can check a build URL: the store's ledger, a fetcher, a fixed set.
pub trait BuildUrlResolver {
    fn check(&self, b: &BuildUrl) -> BuildAnswer;
}

/// No ledger: every build URL is unchecked.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoBuilds;

impl BuildUrlResolver for NoBuilds {
    fn check(&self, _b: &BuildUrl) -> BuildAnswer {
        BuildAnswer::Unchecked { why: "no build ledger was given".into() }
    }
}

/// A fixed set of builds (job, build id). Closed world: anything else is missing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KnownBuilds {
    pub builds: BTreeSet<(String, String)>,
}

impl KnownBuilds {
    /// From (job, build id) pairs.
    pub fn new<I: IntoIterator<Item = (String, String)>>(builds: I) -> KnownBuilds {
        KnownBuilds { builds: builds.into_iter().collect() }
    }

    /// From URLs (unrecognised ones are ignored).
    pub fn from_urls<'a, I: IntoIterator<Item = &'a str>>(urls: I) -> KnownBuilds {
        KnownBuilds::new(urls.into_iter().filter_map(parse_build_url).map(|b| (b.job, b.build_id)))
    }
}

impl BuildUrlResolver for KnownBuilds {
    fn check(&self, b: &BuildUrl) -> BuildAnswer {
        if self.builds.contains(&(b.job.clone(), b.build_id.clone())) {
            BuildAnswer::Known { evidence: None }
        } else {
            BuildAnswer::Missing { why: format!("build {} of {} is not in the ledger", b.build_id, b.job) }
        }
    }
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
        }
    }
}

/// The outside state the checks consult.
pub struct Resolvers<'a> {
    pub refs: &'a dyn RefResolver,
    pub code: &'a dyn CodeResolver,
    pub builds: &'a dyn BuildUrlResolver,
}

// ---- extraction -------------------------------------------------------------------------

/// A `path:line` claim in the report.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FileLineRef {
    pub line: usize,
    pub raw: String,
    /// The `owner/repo:` or `repo:` prefix.
    pub repo: Option<String>,
    pub path: String,
    pub start: usize,
    pub end: usize,
    /// Further lines listed with commas (`file.go:3306,3458`).
    pub more: Vec<usize>,
}

const EXTENSIONS: &str = "go|py|sh|bash|zsh|ps1|yaml|yml|json|jsonnet|libsonnet|md|txt|rs|js|mjs|ts|tsx|jsx|c|h|cc|cpp|hpp|java|kt|rb|toml|sql|mk|tf|proto|xml|cfg|conf|ini|bzl|bazel|star|lua|php|cs|swift|scala|gradle|properties|tpl|j2|html|css|rst|adoc|mod|sum|csv|service|tmpl|template|cue|nix|pl|r";

fn file_line_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(&format!(
            r"(?:([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)?):)?((?:[A-Za-z0-9_.@+-]+/)*(?:[A-Za-z0-9_.@+-]*\.(?:{EXTENSIONS})|Makefile|Dockerfile|Containerfile|OWNERS|OWNERS_ALIASES|BUILD|Jenkinsfile)):([0-9]{{1,6}})(?:-([0-9]{{1,6}}))?((?:,\s?[0-9]{{1,6}}\b)*)"
        ))
        .expect("static regex")
    })
}

fn url_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(r#"https?://[^\s<>()\[\]|`"']+"#).expect("static regex"))
}

fn bare_build_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(r"\b[0-9]{16,20}\b").expect("static regex"))
}

fn url_spans(line: &str) -> Vec<(usize, usize, String)> {
    url_re()
        .find_iter(line)
        .map(|m| {
            let u = m.as_str().trim_end_matches(['.', ',', ';', ':', '!', '?', '*', '_']);
            (m.start(), m.start() + u.len(), u.to_string())
        })
        .collect()
}

/// Every `path:line` claim (fenced blocks included: diff sketches name files too).
pub fn extract_file_lines(report: &Report) -> Vec<FileLineRef> {
    let mut out = Vec::new();
    for (i, line) in report.lines.iter().enumerate() {
        let urls = url_spans(line);
        for c in file_line_re().captures_iter(line) {
            let m = c.get(0).expect("match");
            if urls.iter().any(|(a, b, _)| m.start() < *b && m.end() > *a) {
                continue;
            }
            if let Some(prev) = line[..m.start()].chars().next_back() {
                if prev.is_alphanumeric() || matches!(prev, '_' | '.' | '/' | '-' | '@' | ':') {
                    continue;
                }
            }
            if line[m.end()..].chars().next().is_some_and(|ch| ch.is_alphanumeric()) {
                continue;
            }
            let (Some(path), Some(a)) = (c.get(2), c.get(3).and_then(|x| x.as_str().parse::<usize>().ok())) else {
                continue;
            };
            if a == 0 {
                continue;
            }
            let b = c.get(4).and_then(|x| x.as_str().parse::<usize>().ok()).filter(|b| *b >= a).unwrap_or(a);
            let more: Vec<usize> = c
                .get(5)
                .map(|x| x.as_str().split(',').filter_map(|n| n.trim().parse().ok()).filter(|n| *n > 0).collect())
                .unwrap_or_default();
            out.push(FileLineRef {
                line: i + 1,
                raw: m.as_str().to_string(),
                repo: c.get(1).map(|x| x.as_str().to_string()),
                path: path.as_str().to_string(),
                start: a,
                end: b,
                more,
            });
        }
    }
    out
}

/// Every build URL with its report line.
pub fn extract_build_urls(report: &Report) -> Vec<(usize, BuildUrl)> {
    let mut out = Vec::new();
    for (i, line) in report.lines.iter().enumerate() {
        for (_, _, u) in url_spans(line) {
            if let Some(b) = parse_build_url(&u) {
                out.push((i + 1, b));
            }
        }
    }
    out
}

fn bare_build_ids(line: &str) -> usize {
    let urls = url_spans(line);
    bare_build_re().find_iter(line).filter(|m| !urls.iter().any(|(a, b, _)| m.start() >= *a && m.end() <= *b)).count()
}

// ---- claims about PR state ---------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Claim {
    Merged,
    NotMerged,
    Closed,
    Open,
}

fn claim_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"(?i)(✅|❌|🟢|🟡|\bmerged\b|\blanded\b|\bshipped\b|\bclosed\b|\bopen\b)").expect("static regex")
    })
}

/// The state claims in a piece of text, in order.
fn claims_in(text: &str) -> Vec<Claim> {
    let mut out = Vec::new();
    for m in claim_re().find_iter(text) {
        let w = m.as_str();
        let before = text[..m.start()].to_ascii_lowercase();
        let before = before.trim_end();
        let negated = ["not", "never", "n't", "yet", "un-", "be"].iter().any(|n| before.ends_with(n));
        let c = match w.to_ascii_lowercase().as_str() {
            "✅" => Claim::Merged,
            "❌" => Claim::Closed,
            "🟢" | "🟡" => Claim::Open,
            "merged" | "landed" | "shipped" if negated => Claim::NotMerged,
            "merged" | "landed" | "shipped" => Claim::Merged,
            "closed" => Claim::Closed,
            // Only upper-case OPEN is a state ("open questions" is not).
            "open" if w == "OPEN" => Claim::Open,
            _ => continue,
        };
        out.push(c);
    }
    out
}

fn first_claim(text: &str) -> Option<Claim> {
    claims_in(text).first().copied()
}

fn connector_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"^[\s,;/+&]*(?:(?:and|or)\s+)?(?:\([^()]{0,80}\))?[\s,;/+&]*(?:(?:and|or)\s+)?$")
            .expect("static regex")
    })
}

/// The state each reference on a line is claimed to have: the text after it up to the
/// next reference; when that says nothing, the text after the following references
/// joined to it by list separators; then the lead-in before the first reference.
fn claims_on_line(line: &str, spans: &[(usize, usize)]) -> Vec<Option<Claim>> {
    let text = without_code(line);
    let window = |i: usize| -> &str {
        let end = spans.get(i + 1).map(|s| s.0).unwrap_or(text.len());
        text.get(spans[i].1..end).unwrap_or("")
    };
    let joined = |i: usize| -> bool {
        // Reference i is joined to reference i+1 by a separator only.
        spans.get(i + 1).is_some_and(|n| text.get(spans[i].1..n.0).is_some_and(|b| connector_re().is_match(b)))
    };
    let lead = text.get(..spans.first().map(|s| s.0).unwrap_or(0)).unwrap_or("");
    // The lead-in's claim closest to the references.
    let lead_claim = claims_in(lead).last().copied();
    (0..spans.len())
        .map(|i| {
            if let Some(c) = first_claim(window(i)) {
                return Some(c);
            }
            let mut j = i;
            while joined(j) {
                j += 1;
                if let Some(c) = first_claim(window(j)) {
                    return Some(c);
                }
            }
            if (0..i).all(joined) {
                lead_claim
            } else {
                None
            }
        })
        .collect()
}

// ---- the checks -------------------------------------------------------------------------

struct Ctx<'a> {
    report: &'a Report,
    findings: Vec<Finding>,
    unchecked: Vec<Unchecked>,
    na: BTreeMap<&'static str, String>,
    notes: BTreeMap<&'static str, String>,
}

impl Ctx<'_> {
    fn flag(&mut self, line: usize, id: &'static str, message: String, evidence: Vec<Evidence>) {
        let r = rule_info(id);
        self.findings.push(Finding {
            line,
            rule_id: id.to_string(),
            rule: format!("{} ({})", r.text, r.source),
            message,
            evidence,
        });
    }

    fn skip(&mut self, line: usize, kind: &str, what: String, why: String, other_lines: Vec<usize>) {
        self.unchecked.push(Unchecked { line, kind: kind.to_string(), what, why, other_lines });
    }
}

fn section_text(r: &Report, s: &Section) -> String {
    (s.line..=s.end).map(|n| r.line(n)).collect::<Vec<_>>().join("\n")
}

/// Verifies report text.
pub fn verify(text: &str, resolvers: &Resolvers<'_>, opts: &VerifyOptions) -> Verification {
    verify_report(&parse(text), resolvers, opts)
}

/// Verifies a parsed report.
pub fn verify_report(report: &Report, resolvers: &Resolvers<'_>, opts: &VerifyOptions) -> Verification {
    let mut cx =
        Ctx { report, findings: Vec::new(), unchecked: Vec::new(), na: BTreeMap::new(), notes: BTreeMap::new() };
    let text = report.lines.join("\n");
    let refs = extract_refs(&text, &opts.refs);
    let file_lines = extract_file_lines(report);
    let builds = extract_build_urls(report);
    let mut stats = Stats {
        lines: report.lines.len(),
        format: match report.format {
            ReportFormat::Markdown => "markdown".into(),
            ReportFormat::Rendered => "rendered".into(),
        },
        sections: report.sections.len(),
        patterns: report.patterns().len(),
        sub_patterns: report.sections_of(SectionKind::SubPattern).len(),
        refs_found: refs.len(),
        file_lines_found: file_lines.len(),
        build_urls_found: builds.len(),
        bare_build_ids: report.lines.iter().map(|l| bare_build_ids(l)).sum(),
        ..Default::default()
    };

    let states = check_refs(&mut cx, &refs, resolvers.refs, &mut stats);
    check_merged_claims(&mut cx, &refs, &states);
    check_file_lines(&mut cx, &file_lines, resolvers.code, &mut stats);
    check_builds(&mut cx, &builds, resolvers.builds, &mut stats);
    check_tldr(&mut cx, &refs, opts);
    check_placeholders(&mut cx);
    check_tiers(&mut cx, &refs, &file_lines);
    check_sections(&mut cx, opts);
    check_patterns(&mut cx, &file_lines, &builds, opts);

    let mut findings = cx.findings;
    findings.sort();
    findings.dedup();
    let mut unchecked = cx.unchecked;
    unchecked.sort();
    unchecked.dedup();
    let checks = RULES
        .iter()
        .map(|r| {
            let nf = findings.iter().filter(|f| f.rule_id == r.id).count();
            let kind = match r.id {
                "ref-exists" | "merged-claim" => Some("ref"),
                "file-line" => Some("file-line"),
                "build-url" => Some("build-url"),
                _ => None,
            };
            let nu = kind.map(|k| unchecked.iter().filter(|u| u.kind == k).count()).unwrap_or(0);
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
    Verification { findings, unchecked, checks, stats }
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
        let others: Vec<usize> = lines.iter().skip(1).map(|(l, _)| *l).collect();
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

/// A PR called merged (✅, "MERGED", "landed", "shipped") must be merged.
fn check_merged_claims(cx: &mut Ctx<'_>, refs: &[FoundRef], states: &BTreeMap<IssueRef, RefState>) {
    let mut by_line: BTreeMap<usize, Vec<&FoundRef>> = BTreeMap::new();
    for f in refs {
        by_line.entry(f.line).or_default().push(f);
    }
    for (line, found) in by_line {
        if cx.report.fenced.contains(&line) {
            continue;
        }
        let spans: Vec<(usize, usize)> = found.iter().map(|f| f.span()).collect();
        let claims = claims_on_line(cx.report.line(line), &spans);
        for (f, claim) in found.iter().zip(claims) {
            if claim != Some(Claim::Merged) {
                continue;
            }
            let Some(r) = f.reference() else { continue };
            let Some(state) = states.get(r) else { continue };
            let actual = match state {
                RefState::Pr(p) => match &p.status {
                    PrStatus::ClosedUnmerged { closed_at } => Some(format!(
                        "CLOSED without merging{} — a fix attempt that did not land",
                        closed_at.as_ref().map(|a| format!(" ({a})")).unwrap_or_default()
                    )),
                    PrStatus::Open { draft, .. } => {
                        Some(if *draft { "still OPEN (draft)".into() } else { "still OPEN".into() })
                    }
                    _ => None,
                },
                _ => None,
            };
            if let Some(actual) = actual {
                let when = state
                    .read()
                    .map(|r| r.read_at.map(citriage_model::time::utc).unwrap_or_default())
                    .unwrap_or_default();
                cx.flag(
                    line,
                    "merged-claim",
                    format!("{} is called merged here but is {actual} (read {when})", f.raw),
                    state.evidence().into_iter().collect(),
                );
            }
        }
    }
}

fn check_file_lines(cx: &mut Ctx<'_>, claims: &[FileLineRef], code: &dyn CodeResolver, stats: &mut Stats) {
    // Each distinct claim is checked once.
    // (repo, path, first line, last line, further lines) → report lines citing it.
    type Key = (Option<String>, String, usize, usize, Vec<usize>);
    let mut groups: BTreeMap<Key, Vec<usize>> = BTreeMap::new();
    for c in claims {
        groups.entry((c.repo.clone(), c.path.clone(), c.start, c.end, c.more.clone())).or_default().push(c.line);
    }
    stats.file_lines_distinct = groups.len();
    for ((repo, path, start, end, more), lines) in groups {
        let shown = match &repo {
            Some(r) => format!("{r}:{path}:{start}{}", if end > start { format!("-{end}") } else { String::new() }),
            None => format!("{path}:{start}{}", if end > start { format!("-{end}") } else { String::new() }),
        };
        let mut answers = vec![code.check(repo.as_deref(), &path, start, end)];
        for m in &more {
            answers.push(code.check(repo.as_deref(), &path, *m, *m));
        }
        let missing: Vec<String> = answers
            .iter()
            .filter_map(|a| match a {
                CodeAnswer::Missing { why } => Some(why.clone()),
                _ => None,
            })
            .collect();
        let unchecked: Option<String> = answers.iter().find_map(|a| match a {
            CodeAnswer::Unchecked { why } => Some(why.clone()),
            _ => None,
        });
        let evidence: Vec<Evidence> = answers
            .iter()
            .filter_map(|a| match a {
                CodeAnswer::Found { evidence, .. } => Some(evidence.clone()),
                _ => None,
            })
            .collect();
        if !missing.is_empty() {
            let also =
                if lines.len() > 1 { format!(" (also cited on lines {})", join(&lines[1..])) } else { String::new() };
            cx.flag(lines[0], "file-line", format!("{shown} does not resolve: {}{also}", missing.join("; ")), evidence);
        } else if let Some(why) = unchecked {
            cx.skip(lines[0], "file-line", shown, why, lines[1..].to_vec());
        } else {
            stats.file_lines_resolved += 1;
        }
    }
}

fn check_builds(cx: &mut Ctx<'_>, builds: &[(usize, BuildUrl)], resolver: &dyn BuildUrlResolver, stats: &mut Stats) {
    if cx.report.format == ReportFormat::Rendered && stats.bare_build_ids > 0 {
        let why = format!(
            "rendered text: {} bare build id(s) may have been links whose URLs are lost; they cannot be checked",
            stats.bare_build_ids
        );
        if builds.is_empty() {
            cx.na.insert("build-url", why);
        } else {
            cx.notes.insert("build-url", why);
        }
    }
    let mut groups: BTreeMap<(String, String), Vec<(usize, String)>> = BTreeMap::new();
    for (line, b) in builds {
        groups.entry((b.job.clone(), b.build_id.clone())).or_default().push((*line, b.url.clone()));
    }
    stats.build_urls_distinct = groups.len();
    for ((job, id), uses) in groups {
        let b = BuildUrl { url: uses[0].1.clone(), job: job.clone(), build_id: id.clone() };
        let others: Vec<usize> = uses.iter().skip(1).map(|(l, _)| *l).collect();
        match resolver.check(&b) {
            BuildAnswer::Known { .. } => stats.build_urls_known += 1,
            BuildAnswer::Missing { why } => cx.flag(
                uses[0].0,
                "build-url",
                format!("{} — {why}; a cited build must have been fetched", b.url),
                Vec::new(),
            ),
            BuildAnswer::Unchecked { why } => cx.skip(uses[0].0, "build-url", b.url.clone(), why, others),
        }
    }
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
    let mut by_line: BTreeMap<usize, Vec<&FoundRef>> = BTreeMap::new();
    for f in refs.iter().filter(|f| tl.contains(f.line)) {
        by_line.entry(f.line).or_default().push(f);
    }
    for (line, found) in by_line {
        let spans: Vec<(usize, usize)> = found.iter().map(|f| f.span()).collect();
        let claims = claims_on_line(cx.report.line(line), &spans);
        for (f, c) in found.iter().zip(claims) {
            if c == Some(Claim::Merged) && !in_tier0(f) {
                let why = if tier0.is_empty() { "there is no Tier 0 section" } else { "Tier 0 does not list it" };
                cx.flag(line, "tldr-tier0", format!("the TL;DR calls {} shipped but {why}", f.raw), Vec::new());
            }
        }
    }
}

fn placeholder_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"\bTODO\b|\bTBD\b|\bFIXME\b|(?i:\bplaceholders?\b)|(?i:\blorem ipsum\b)|\{[A-Z][A-Z0-9_]{2,}\}|\{[A-Z][A-Za-z]+(?:\|[A-Z][A-Za-z]+)+\}")
            .expect("static regex")
    })
}

fn check_placeholders(cx: &mut Ctx<'_>) {
    let markdown = cx.report.format == ReportFormat::Markdown;
    let mut hits = Vec::new();
    for (i, l) in cx.report.lines.iter().enumerate() {
        let n = i + 1;
        if markdown && cx.report.fenced.contains(&n) {
            continue;
        }
        // Quoted code (`// TODO` in a code span) is evidence, not an unfinished report.
        let t = if markdown { without_code(l) } else { l.clone() };
        let words: BTreeSet<&str> = placeholder_re().find_iter(&t).map(|m| m.as_str()).collect();
        if !words.is_empty() {
            hits.push((n, words.into_iter().map(str::to_string).collect::<Vec<_>>().join(", ")));
        }
    }
    for (n, words) in hits {
        cx.flag(n, "placeholder", format!("unfinished text: {words}"), Vec::new());
    }
    if !markdown {
        cx.notes.insert("placeholder", "rendered text: code spans are lost, so quoted code counts too".into());
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
        return;
    }
    let tiers: Vec<Section> =
        cx.report.sections.iter().filter(|s| matches!(s.kind, SectionKind::Tier(_))).cloned().collect();
    if tiers.is_empty() {
        cx.na.insert("tier-columns", "no tier sections".into());
        cx.na.insert("fix-shape", "no tier sections".into());
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

fn check_patterns(cx: &mut Ctx<'_>, file_lines: &[FileLineRef], builds: &[(usize, BuildUrl)], opts: &VerifyOptions) {
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
        let fl: BTreeSet<&str> = file_lines.iter().filter(|f| p.contains(f.line)).map(|f| f.raw.as_str()).collect();
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
        let body = section_text(r, p).to_ascii_lowercase();
        let introduced = body.contains("introduc");
        let exposed = body.contains("expos");
        if !(body.contains("unknown") || introduced && exposed) {
            let missing = match (introduced, exposed) {
                (false, false) => "neither the introducing nor the exposing change",
                (true, false) => "no exposing change",
                _ => "no introducing change",
            };
            cx.flag(
                p.line,
                "causal-chain",
                format!(
                    "\"{}\" names {missing} and does not say it is unknown",
                    p.title.chars().take(70).collect::<String>()
                ),
                Vec::new(),
            );
        }
    }
    if depth_applies {
        let how = if rendered { "; rendered text: bare build ids count as build citations" } else { "" };
        cx.notes.insert("pattern-depth", format!("{} of {} pattern(s) below the bar{how}", thin, patterns.len()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(line: &str) -> Vec<Option<Claim>> {
        let refs = extract_refs(line, &RefContext::kubernetes());
        let spans: Vec<(usize, usize)> = refs.iter().map(|f| f.span()).collect();
        claims_on_line(line, &spans)
    }

    #[test]
    fn claims_follow_the_text() {
        use Claim::*;
        assert_eq!(claims("| 0.1 | k/k#1 coverage fix | ✅ MERGED 2026-05-10 |"), vec![Some(Merged)]);
        assert_eq!(claims("6 fix PRs merged today: k/k#1 (coverage), kops#2 (gossip), k/k#3."), vec![Some(Merged); 3]);
        assert_eq!(
            claims("Fix attempt #5 CLOSED unmerged (author-closed). Predecessor #6 MERGED."),
            vec![Some(Closed), Some(Merged)]
        );
        assert_eq!(claims("Tracker: k/k#7 OPEN, open questions remain"), vec![Some(Open)]);
        assert_eq!(claims("k/k#8 was not merged"), vec![Some(NotMerged)]);
        assert_eq!(claims("k/k#9 is the unmerged attempt"), vec![None]);
        assert_eq!(claims("Cherry-pick k/k#10 to release-1.36"), vec![None]);
        assert_eq!(claims("`merged` k/k#11 `MERGED`"), vec![None]);
    }

    #[test]
    fn file_line_claims() {
        let r = parse("see pkg/a/b.go:12, kubernetes-sigs/x:hack/c.sh:3-5 and t.go:3306,3458 or https://h.io/a.go:9 v1.2.3:4 127.0.0.1:2380\n");
        type Got = (Option<String>, String, usize, usize, Vec<usize>);
        let got: Vec<Got> =
            extract_file_lines(&r).into_iter().map(|f| (f.repo, f.path, f.start, f.end, f.more)).collect();
        assert_eq!(
            got,
            vec![
                (None, "pkg/a/b.go".into(), 12, 12, vec![]),
                (Some("kubernetes-sigs/x".into()), "hack/c.sh".into(), 3, 5, vec![]),
                (None, "t.go".into(), 3306, 3306, vec![3458]),
            ]
        );
    }

    #[test]
    fn build_urls() {
        let b =
            parse_build_url("https://prow.k8s.io/view/gs/kubernetes-ci-logs/logs/ci-x/2053458703197147136").unwrap();
        assert_eq!((b.job.as_str(), b.build_id.as_str()), ("ci-x", "2053458703197147136"));
        let p = parse_build_url(
            "https://storage.googleapis.com/kubernetes-ci-logs/pr-logs/pull/1/pull-y/2124243279412937136/build-log.txt",
        )
        .unwrap();
        assert_eq!(p.job, "pull-y");
        assert!(parse_build_url("https://storage.googleapis.com/k8s-metrics/failures-latest.json").is_none());
        assert!(parse_build_url("https://github.com/o/r/pull/2053458703").is_none());
        let k = KnownBuilds::from_urls(["https://prow.k8s.io/view/gs/b/logs/ci-x/2053458703197147136"]);
        let same_build_other_host =
            parse_build_url("https://storage.googleapis.com/b/logs/ci-x/2053458703197147136/build-log.txt").unwrap();
        assert!(matches!(k.check(&same_build_other_host), BuildAnswer::Known { .. }));
    }
}
