//! Suspect scoring: a deterministic, itemized rubric per (failed job, failure
//! mode, candidate), capped at 100.
//!
//! | signal | points | fires when |
//! |---|---|---|
//! | `new_failure_mode` | +30 | the mode began with the payload that contains the candidate (the job passed, or failed differently, in the payload before) **and** the candidate plausibly explains it: an error-message or code-path link (a subsystem link for RPM changes) |
//! | `component_exclusivity` | +30 / +20 / +10 | the candidate correlates with the failure and is the sole / one of 2-3 / one of 4+ candidates of its payload modifying that component |
//! | `error_message_match` | +40 / +20 / +10 | +40 only when a string or symbol taken verbatim from the failure evidence appears in an **added** line of the candidate's diff (both lines are quoted with their locations); +20 when the diff touches the code path named by the evidence (a file of a stack frame / log prefix, or removes a line carrying an evidence token); +10 when the candidate's component is named by the evidence |
//! | `multi_job_correlation` | +10 | the candidate correlates (+40 or +20 tier) with the same root cause in 2+ failed jobs |
//! | `presubmit_coverage_gap` | +10 | the candidate correlates, its presubmit jobs are known, and none covers the failing job's scenario |
//!
//! Infrastructure causes, flakes and informing-only failures give unrelated
//! candidates nothing (each carries a zero-point note saying why); a failure
//! classified as a CI-configuration problem gives payload PRs nothing unless they
//! match the error verbatim.

use std::collections::BTreeSet;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::classify::FailureClass;
use crate::diff::ParsedDiff;
use crate::evidence::LogLine;

/// What kind of change a candidate is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum CandidateKind {
    /// A pull request of a payload component.
    Pr,
    /// A change to the CI configuration (step registry...).
    CiConfig,
    /// An RHCOS RPM package change.
    RhcosRpm,
}

/// An RHCOS RPM change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RpmChange {
    pub variant_tag: String,
    pub variant_name: String,
    pub package: String,
    pub old_version: String,
    pub new_version: String,
    /// Changelog entries the new version added, when available.
    pub changelog: Option<String>,
}

/// A candidate cause.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Candidate {
    /// `pr:org/repo#n`, `ci:org/repo@sha`, `rpm:<variant>/<package>`.
    pub id: String,
    pub kind: CandidateKind,
    pub title: String,
    pub url: Option<String>,
    /// Repository name, `step registry`, or RHCOS variant.
    pub component: String,
    /// `org/repo`.
    pub repo: Option<String>,
    pub number: Option<u64>,
    pub images: Vec<String>,
    /// The payload whose changelog introduced it.
    pub payload: Option<String>,
    /// Commit time (CI-configuration changes).
    pub date: Option<String>,
    pub rpm: Option<RpmChange>,
    /// The diff, when available (not serialized).
    #[serde(skip)]
    pub diff: Option<ParsedDiff>,
    pub diff_available: bool,
    /// Presubmit job names, when known.
    pub presubmits: Option<Vec<String>>,
    /// A Kubernetes rebase of `openshift/kubernetes`.
    pub is_rebase: bool,
}

impl Candidate {
    /// The key that defines "the same component" for exclusivity.
    pub fn component_key(&self) -> String {
        match self.kind {
            CandidateKind::Pr => self.repo.clone().unwrap_or_else(|| self.component.clone()),
            CandidateKind::RhcosRpm => self.rpm.as_ref().map(|r| format!("rpm:{}", r.package)).unwrap_or_default(),
            CandidateKind::CiConfig => {
                let dirs: BTreeSet<String> = self
                    .diff
                    .iter()
                    .flat_map(|d| d.paths())
                    .map(|p| {
                        let parts: Vec<&str> = p.split('/').collect();
                        parts[..parts.len().saturating_sub(1).min(4)].join("/")
                    })
                    .collect();
                format!("ci:{}", dirs.into_iter().next().unwrap_or_default())
            }
        }
    }

    /// `#123` / `abc1234` / `systemd 1 → 2`.
    pub fn short(&self) -> String {
        match (&self.kind, self.number, &self.rpm) {
            (CandidateKind::RhcosRpm, _, Some(r)) => format!("{} {} → {}", r.package, r.old_version, r.new_version),
            (_, Some(n), _) => format!("{}#{n}", self.repo.as_deref().unwrap_or(&self.component)),
            _ => self.id.trim_start_matches("ci:").to_string(),
        }
    }
}

/// Rubric signals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Signal {
    NewFailureMode,
    ComponentExclusivity,
    ErrorMessageMatch,
    MultiJobCorrelation,
    PresubmitCoverageGap,
}

impl Signal {
    pub fn name(self) -> &'static str {
        match self {
            Signal::NewFailureMode => "new_failure_mode",
            Signal::ComponentExclusivity => "component_exclusivity",
            Signal::ErrorMessageMatch => "error_message_match",
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

/// A verbatim match between failure evidence and an added diff line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorMatch {
    /// The string or symbol found in both.
    pub token: String,
    /// `phrase`, `quoted`, `symbol`, `flag`.
    pub token_kind: String,
    /// The evidence line, with its location.
    pub log: LogLine,
    /// The diff file and new-side line.
    pub diff_file: String,
    pub diff_line: u32,
    /// The added line, verbatim.
    pub diff_text: String,
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
    /// `min(100, sum of items)`.
    pub total: u32,
    pub correlation: Correlation,
    pub error_match: Option<ErrorMatch>,
    /// Why nothing fired, when nothing did.
    pub note: Option<String>,
}

/// Kinds of evidence tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TokenKind {
    Symbol,
    Flag,
    Quoted,
    Phrase,
}

impl TokenKind {
    fn name(self) -> &'static str {
        match self {
            TokenKind::Symbol => "symbol",
            TokenKind::Flag => "flag",
            TokenKind::Quoted => "quoted",
            TokenKind::Phrase => "phrase",
        }
    }
}

/// A distinctive string of the failure evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub text: String,
    pub kind: TokenKind,
    /// Index of the evidence line it came from.
    pub line: usize,
}

/// Extracts tokens and matches them against diffs.
pub struct Matcher {
    quoted: Regex,
    symbol: Regex,
    flag: Regex,
    klog: Regex,
    frame_file: Regex,
    generic_symbols: BTreeSet<&'static str>,
    generic_phrases: Vec<&'static str>,
}

impl Default for Matcher {
    fn default() -> Self {
        Matcher {
            quoted: Regex::new(r#""([^"\n]{6,200})"|`([^`\n]{6,200})`|'([^'\n]{6,200})'"#).unwrap(),
            symbol: Regex::new(r"\(?\*?[A-Za-z_][A-Za-z0-9_]*\)?(?:\.\(?\*?[A-Za-z_][A-Za-z0-9_]*\)?)*").unwrap(),
            flag: Regex::new(r"--[a-z][a-z0-9]*(?:-[a-z0-9]+)+|--[a-z][a-z0-9]{3,}").unwrap(),
            klog: Regex::new(r"^[IWEF]\d{4} \d\d:\d\d:\d\d(\.\d+)?\s+\d+\s+").unwrap(),
            frame_file: Regex::new(r"([A-Za-z0-9_][A-Za-z0-9_.-]*\.(?:go|py|sh|rs|java|ts|js|yaml|yml))(?::\d+)?")
                .unwrap(),
            generic_symbols: [
                "ClusterVersion",
                "ClusterOperator",
                "ClusterOperators",
                "ConfigMap",
                "DaemonSet",
                "StatefulSet",
                "ReplicaSet",
                "ServiceAccount",
                "CustomResourceDefinition",
                "MachineConfig",
                "MachineConfigPool",
                "FeatureGate",
                "KubeAPIServer",
                "OpenShift",
                "Kubernetes",
                "GitHub",
                "DeadlineExceeded",
                "NotFound",
                "AlreadyExists",
                "InternalError",
                "StatusCode",
                "RetrievePayload",
                "context",
                "metadata",
                "namespace",
                "openshift",
                "kubernetes",
                "default",
                "Available",
                "Degraded",
                "Progressing",
                "Upgradeable",
                "NodeReady",
                "PodReady",
                "Running",
                "Pending",
                "Failed",
                "Succeeded",
                "Unknown",
                "Bootstrap",
                "bootstrap",
            ]
            .into_iter()
            .collect(),
            generic_phrases: vec![
                "timed out waiting for the condition",
                "context deadline exceeded",
                "connection refused",
                "the server could not find the requested resource",
                "an error on the server",
                "unexpected error",
                "no such host",
                "i/o timeout",
                "exit status 1",
                "Process did not finish before",
            ],
        }
    }
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Finds `needle` in `hay` with no identifier character directly around it.
fn find_bounded(hay: &str, needle: &str) -> bool {
    let hb = hay.as_bytes();
    let first = needle.as_bytes().first().copied().unwrap_or(b' ');
    let last = needle.as_bytes().last().copied().unwrap_or(b' ');
    let mut start = 0;
    while let Some(i) = hay[start..].find(needle) {
        let s = start + i;
        let e = s + needle.len();
        let left_ok = s == 0 || !is_word_byte(first) || !is_word_byte(hb[s - 1]);
        let right_ok = e >= hb.len() || !is_word_byte(last) || !is_word_byte(hb[e]);
        if left_ok && right_ok {
            return true;
        }
        start = s + hay[s..].chars().next().map(char::len_utf8).unwrap_or(1);
        if start >= hay.len() {
            break;
        }
    }
    false
}

impl Matcher {
    fn distinctive_symbol(&self, s: &str) -> bool {
        let core = s.trim_matches(|c: char| c == '(' || c == ')' || c == '*' || c == '.');
        if core.len() < 6 || self.generic_symbols.contains(core) {
            return false;
        }
        let has_dot = core.contains('.');
        let has_us = core.contains('_') && core.chars().any(|c| c.is_ascii_alphabetic());
        let inner_upper =
            core.chars().skip(1).any(|c| c.is_ascii_uppercase()) && core.chars().any(|c| c.is_ascii_lowercase());
        // Dotted names must look like code (not a host name or a sentence end).
        if has_dot {
            let parts: Vec<&str> = core.split('.').collect();
            let code_like =
                parts.iter().any(|p| p.chars().skip(1).any(|c| c.is_ascii_uppercase())) || core.contains("(*");
            return code_like && parts.iter().all(|p| !p.is_empty());
        }
        (inner_upper || has_us) && !core.chars().all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
    }

    fn generic_phrase(&self, p: &str) -> bool {
        let l = p.to_ascii_lowercase();
        self.generic_phrases.iter().any(|g| {
            let g = g.to_ascii_lowercase();
            // Generic when what remains around the generic words is not a phrase itself.
            l.contains(&g) && l.replacen(&g, " ", 1).split_whitespace().count() < 4
        })
    }

    /// Distinctive tokens of the evidence lines: quoted strings, phrases between
    /// `: ` separators (4+ words, 20+ characters), code symbols and CLI flags.
    pub fn tokens(&self, lines: &[LogLine]) -> Vec<Token> {
        let mut out: Vec<Token> = Vec::new();
        let mut seen = BTreeSet::new();
        let mut push = |out: &mut Vec<Token>, text: String, kind: TokenKind, line: usize| {
            if seen.insert(text.clone()) {
                out.push(Token { text, kind, line });
            }
        };
        for (i, l) in lines.iter().enumerate() {
            let text = self.klog.replace(&l.text, "");
            for c in self.quoted.captures_iter(&text) {
                let q = c.get(1).or_else(|| c.get(2)).or_else(|| c.get(3)).map(|m| m.as_str().trim()).unwrap_or("");
                let letters = q.chars().filter(|c| c.is_ascii_alphabetic()).count();
                if q.len() >= 6
                    && letters >= 4
                    && !self.generic_phrase(q)
                    && (q.contains(' ') || self.distinctive_symbol(q) || q.len() >= 12)
                {
                    push(&mut out, q.to_string(), TokenKind::Quoted, i);
                }
            }
            for seg in text.split(": ") {
                let seg = seg.trim().trim_matches(|c: char| c == '"' || c == '\'' || c == '.' || c == ',' || c == '`');
                let words = seg.split_whitespace().count();
                if words >= 4 && seg.len() >= 20 && seg.len() <= 200 && !self.generic_phrase(seg) {
                    push(&mut out, seg.to_string(), TokenKind::Phrase, i);
                }
            }
            for m in self.flag.find_iter(&text) {
                push(&mut out, m.as_str().to_string(), TokenKind::Flag, i);
            }
            for m in self.symbol.find_iter(&text) {
                let s = m.as_str().trim_start_matches('(').trim_end_matches(')').trim_end_matches('.');
                if self.distinctive_symbol(s) {
                    push(&mut out, s.to_string(), TokenKind::Symbol, i);
                }
            }
        }
        out
    }

    /// File names named by the evidence (stack frames, klog prefixes).
    pub fn evidence_files(&self, lines: &[LogLine]) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for l in lines {
            for c in self.frame_file.captures_iter(&l.text) {
                let f = c[1].to_string();
                if f.len() >= 5 && !f.starts_with("commands.") {
                    out.insert(f);
                }
            }
        }
        out
    }

    /// The best verbatim match of any token in an added line of the diff.
    /// Preference: phrases and quoted strings over flags over symbols, then longer,
    /// then earlier evidence line, then diff order.
    pub fn best_match(&self, tokens: &[Token], lines: &[LogLine], diff: &ParsedDiff) -> Option<ErrorMatch> {
        let mut best: Option<(u8, usize, usize, ErrorMatch)> = None;
        for t in tokens {
            let rank = match t.kind {
                TokenKind::Phrase | TokenKind::Quoted => 3u8,
                TokenKind::Flag => 2,
                TokenKind::Symbol => 1,
            };
            'files: for f in &diff.files {
                for (n, added) in &f.added {
                    let hit = match t.kind {
                        TokenKind::Symbol | TokenKind::Flag => find_bounded(added, &t.text),
                        _ => added.contains(&t.text),
                    };
                    if !hit {
                        continue;
                    }
                    let better = match &best {
                        None => true,
                        Some((r, len, li, _)) => {
                            (rank, t.text.len(), usize::MAX - t.line) > (*r, *len, usize::MAX - *li)
                        }
                    };
                    if better {
                        best = Some((
                            rank,
                            t.text.len(),
                            t.line,
                            ErrorMatch {
                                token: t.text.clone(),
                                token_kind: t.kind.name().to_string(),
                                log: lines[t.line].clone(),
                                diff_file: f.path.clone(),
                                diff_line: *n,
                                diff_text: added.clone(),
                            },
                        ));
                    }
                    break 'files;
                }
            }
        }
        best.map(|b| b.3)
    }

    /// A token found in a removed line: the diff changes the code that produced it.
    pub fn removed_match(&self, tokens: &[Token], diff: &ParsedDiff) -> Option<String> {
        for t in tokens.iter().filter(|t| t.kind != TokenKind::Symbol || t.text.len() >= 8) {
            for f in &diff.files {
                for (n, removed) in &f.removed {
                    let hit = match t.kind {
                        TokenKind::Symbol | TokenKind::Flag => find_bounded(removed, &t.text),
                        _ => removed.contains(&t.text),
                    };
                    if hit {
                        return Some(format!("the diff removes `{}` at {}:{n} (old side)", t.text, f.path));
                    }
                }
            }
        }
        None
    }
}

/// What correlating one candidate with one failure mode found.
#[derive(Debug, Clone)]
pub struct CorrelationResult {
    pub level: Correlation,
    pub error_match: Option<ErrorMatch>,
    /// One line of evidence for the level (code path or subsystem).
    pub evidence: Option<String>,
}

fn word_in(hay_lower: &str, word: &str) -> bool {
    let w = word.to_ascii_lowercase();
    w.len() >= 4 && find_bounded_ci(hay_lower, &w)
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

/// Component words too common in failure text to say which component broke.
const GENERIC_NAMES: &[&str] = &[
    "kubernetes",
    "release",
    "origin",
    "network",
    "storage",
    "config",
    "tests",
    "image",
    "images",
    "node",
    "nodes",
    "machine",
    "cluster",
    "operator",
    "api",
    "cli",
    "pod",
    "etcd-operator",
    "hyperkube",
];

/// Names the evidence may use for a candidate's component.
fn component_names(c: &Candidate) -> Vec<String> {
    let mut names = Vec::new();
    match c.kind {
        CandidateKind::RhcosRpm => {
            if let Some(r) = &c.rpm {
                names.push(r.package.clone());
            }
        }
        _ => {
            if let Some(repo) = &c.repo {
                let name = repo.rsplit('/').next().unwrap_or(repo).to_string();
                let core = name.trim_start_matches("cluster-").trim_end_matches("-operator").to_string();
                names.push(name);
                if core.len() >= 5 && !GENERIC_NAMES.contains(&core.as_str()) {
                    names.push(core);
                }
            }
            names.extend(c.images.iter().filter(|i| i.len() >= 5 && !GENERIC_NAMES.contains(&i.as_str())).cloned());
        }
    }
    names.sort();
    names.dedup();
    names
}

/// Correlates a candidate with a failure mode's evidence.
pub fn correlate(
    m: &Matcher,
    lines: &[LogLine],
    tokens: &[Token],
    evidence_lower: &str,
    failed_step: Option<&str>,
    c: &Candidate,
) -> CorrelationResult {
    if let Some(d) = &c.diff {
        if let Some(em) = m.best_match(tokens, lines, d) {
            return CorrelationResult { level: Correlation::Direct, error_match: Some(em), evidence: None };
        }
        let files = m.evidence_files(lines);
        for p in d.paths() {
            let base = p.rsplit('/').next().unwrap_or(p);
            if files.contains(base) {
                return CorrelationResult {
                    level: Correlation::CodePath,
                    error_match: None,
                    evidence: Some(format!("the evidence names `{base}`, which the diff modifies ({p})")),
                };
            }
            if c.kind == CandidateKind::CiConfig {
                let stem = base
                    .trim_end_matches("-commands.sh")
                    .trim_end_matches("-ref.yaml")
                    .trim_end_matches("-chain.yaml")
                    .trim_end_matches("-workflow.yaml");
                if stem != base && stem.len() >= 4 {
                    if let Some(step) = failed_step.filter(|s| s.contains(stem)) {
                        return CorrelationResult {
                            level: Correlation::CodePath,
                            error_match: None,
                            evidence: Some(format!(
                                "the failing step `{step}` runs `{stem}`, which the change modifies ({p})"
                            )),
                        };
                    }
                    if find_bounded_ci(evidence_lower, &stem.to_ascii_lowercase()) {
                        return CorrelationResult {
                            level: Correlation::CodePath,
                            error_match: None,
                            evidence: Some(format!(
                                "the evidence names step `{stem}`, which the change modifies ({p})"
                            )),
                        };
                    }
                }
            }
        }
        if let Some(e) = m.removed_match(tokens, d) {
            return CorrelationResult { level: Correlation::CodePath, error_match: None, evidence: Some(e) };
        }
    }
    if let Some(r) = c.rpm.as_ref().and_then(|r| r.changelog.as_ref().map(|cl| (r, cl))) {
        let pseudo = crate::diff::parse_patch(
            &format!("{} changelog", r.0.package),
            &format!(
                "@@ -0,0 +1,{} @@\n{}",
                r.1.lines().count(),
                r.1.lines().map(|l| format!("+{l}")).collect::<Vec<_>>().join("\n")
            ),
        );
        if let Some(em) = m.best_match(tokens, lines, &pseudo) {
            return CorrelationResult { level: Correlation::Direct, error_match: Some(em), evidence: None };
        }
    }
    for n in component_names(c) {
        if word_in(evidence_lower, &n) {
            return CorrelationResult {
                level: Correlation::Subsystem,
                error_match: None,
                evidence: Some(format!("the evidence names `{n}`, the candidate's component")),
            };
        }
    }
    CorrelationResult { level: Correlation::None, error_match: None, evidence: None }
}

/// Everything needed to score one (job, mode, candidate) once correlations are known.
pub struct ScoreContext<'a> {
    pub job: &'a str,
    pub mode: &'a str,
    pub root_cause: &'a str,
    pub class: FailureClass,
    /// The mode began in the candidate's payload: description of the onset evidence.
    pub onset_here: Option<String>,
    /// Number of candidates of the same payload modifying the same component.
    pub same_component: usize,
    pub payload: &'a str,
    /// Jobs (other than this one) where the candidate correlates at +20 or better with this root cause.
    pub other_jobs: Vec<String>,
    /// A presubmit coverage gap, described, when the presubmits are known and miss the scenario.
    pub presubmit_gap: Option<String>,
}

/// Applies the rubric.
pub fn score(ctx: &ScoreContext, c: &Candidate, corr: &CorrelationResult) -> CandidateScore {
    let mut s = CandidateScore {
        candidate: c.id.clone(),
        job: ctx.job.to_string(),
        mode: ctx.mode.to_string(),
        root_cause: ctx.root_cause.to_string(),
        items: Vec::new(),
        total: 0,
        correlation: corr.level,
        error_match: corr.error_match.clone(),
        note: None,
    };
    let excluded = match ctx.class {
        FailureClass::Infrastructure => {
            Some("infrastructure cause: a payload change cannot explain it, so no signal applies")
        }
        FailureClass::InformingOnly => Some("only informing tests failed: they cannot reject the payload"),
        FailureClass::Flake if corr.level != Correlation::Direct => {
            Some("flake: the failure predates this candidate or passed on retry")
        }
        FailureClass::CiConfiguration if c.kind != CandidateKind::CiConfig && corr.level != Correlation::Direct => {
            Some("CI-configuration cause: payload changes without a verbatim error match do not explain it")
        }
        _ => None,
    };
    if let Some(n) = excluded {
        s.note = Some(n.to_string());
        return s;
    }
    if corr.level == Correlation::None {
        s.note = Some("no error-message, code-path or component link to this failure".into());
        return s;
    }
    match (&corr.error_match, corr.level) {
        (Some(em), _) => s.items.push(ScoreItem {
            signal: Signal::ErrorMessageMatch,
            points: 40,
            evidence: format!(
                "{} `{}` from {} appears verbatim in the added line {}:{}",
                em.token_kind,
                em.token,
                em.log.at.cite(),
                em.diff_file,
                em.diff_line
            ),
        }),
        (None, Correlation::CodePath) => s.items.push(ScoreItem {
            signal: Signal::ErrorMessageMatch,
            points: 20,
            evidence: format!("same code path: {}", corr.evidence.clone().unwrap_or_default()),
        }),
        (None, Correlation::Subsystem) => s.items.push(ScoreItem {
            signal: Signal::ErrorMessageMatch,
            points: 10,
            evidence: format!("same subsystem only: {}", corr.evidence.clone().unwrap_or_default()),
        }),
        _ => {}
    }
    // "New failure mode" needs the change to plausibly explain it: a code-path link
    // for code changes, a subsystem link for RPM changes.
    let plausible = corr.level >= Correlation::CodePath
        || (c.kind == CandidateKind::RhcosRpm && corr.level >= Correlation::Subsystem);
    if let (Some(onset), true) = (&ctx.onset_here, plausible) {
        s.items.push(ScoreItem { signal: Signal::NewFailureMode, points: 30, evidence: onset.clone() });
    }
    let (pts, what) = match ctx.same_component {
        0 | 1 => (30, "the sole candidate".to_string()),
        2 | 3 => (20, format!("one of {} candidates", ctx.same_component)),
        n => (10, format!("one of {n} candidates")),
    };
    s.items.push(ScoreItem {
        signal: Signal::ComponentExclusivity,
        points: pts,
        evidence: format!("{what} modifying {} in {}", c.component_key(), ctx.payload),
    });
    if !ctx.other_jobs.is_empty() && corr.level >= Correlation::CodePath {
        s.items.push(ScoreItem {
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
            s.items.push(ScoreItem { signal: Signal::PresubmitCoverageGap, points: 10, evidence: g.clone() });
        }
    }
    s.items.sort_by_key(|i| i.signal);
    s.total = s.items.iter().map(|i| i.points).sum::<u32>().min(100);
    s
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
    use crate::diff::parse_unified;
    use crate::evidence::Location;

    fn ll(t: &str, line: u32) -> LogLine {
        LogLine { text: t.into(), at: Location { file: "build-log.txt".into(), url: None, line: Some(line) } }
    }

    #[test]
    fn tokens_and_verbatim_match() {
        let m = Matcher::default();
        let lines = vec![ll("E0510 12:00:00.000000 1 reconcile.go:214] failed to reconcile: nil pointer in reconcileNodeLabels while syncing", 12)];
        let toks = m.tokens(&lines);
        assert!(toks.iter().any(|t| t.text == "reconcileNodeLabels" && t.kind == TokenKind::Symbol), "{toks:?}");
        assert!(toks.iter().any(|t| t.text == "nil pointer in reconcileNodeLabels while syncing"), "{toks:?}");
        let d = parse_unified(
            "--- a/pkg/x.go\n+++ b/pkg/x.go\n@@ -1,1 +1,2 @@\n ctx\n+func reconcileNodeLabels(n *Node) error {\n",
        );
        let em = m.best_match(&toks, &lines, &d).unwrap();
        assert_eq!((em.token.as_str(), em.diff_file.as_str(), em.diff_line), ("reconcileNodeLabels", "pkg/x.go", 2));
        assert_eq!(em.log.at.line, Some(12));
        // A near miss is not a match.
        let d2 = parse_unified(
            "--- a/pkg/x.go\n+++ b/pkg/x.go\n@@ -1,1 +1,2 @@\n ctx\n+func reconcileNodeLabelsV2(n *Node) error {\n",
        );
        assert!(m.best_match(&toks, &lines, &d2).is_none());
    }

    #[test]
    fn unicode_does_not_panic() {
        assert!(find_bounded("ééé ééé", "ééé"));
        assert!(find_bounded_ci("ü-über ü", "über"));
        let m = Matcher::default();
        let lines = vec![ll("Fehler: «Zeitüberschreitung» beim Warten auf den Knoten „worker-0“ – nicht bereit", 1)];
        let toks = m.tokens(&lines);
        let d = parse_unified("--- a/x\n+++ b/x\n@@ -1,0 +1,1 @@\n+Zeitüberschreitung beim Warten auf den Knoten\n");
        let _ = m.best_match(&toks, &lines, &d);
    }

    #[test]
    fn generic_words_are_not_tokens() {
        let m = Matcher::default();
        let toks = m.tokens(&[ll("error: timed out waiting for the condition on ClusterVersion", 1)]);
        assert!(toks.is_empty(), "{toks:?}");
    }

    #[test]
    fn presubmit_gaps() {
        let job = "periodic-ci-openshift-release-main-ci-4.22-e2e-aws-ovn-techpreview";
        assert!(presubmit_gap(job, &["pull-ci-openshift-installer-main-e2e-aws-ovn".into()]).is_some());
        assert!(presubmit_gap(job, &["pull-ci-openshift-installer-main-e2e-aws-ovn-techpreview".into()]).is_none());
        assert!(presubmit_gap(job, &[]).is_none());
    }
}
