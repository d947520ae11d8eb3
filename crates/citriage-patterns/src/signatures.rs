//! Known-signature knowledge base: a TOML catalogue of failure modes with matchers.
//!
//! A signature has an `id`, a `name`, a `class` (`infra`, `product`, `test`, `ci-config`,
//! `by-design`), a `fix` hint, `references`, and matchers over failure text or log lines:
//! `any` (at least one must match; required), `all` (each must also match) and `none` (none may
//! match). A matcher is a `literal` or a `regex`, optionally `case_insensitive`.
//!
//! The built-in catalogue (`signatures/default.toml`, compiled in) covers the failure modes
//! of the project's seed reports; users extend it with their own file, whose entries override
//! built-in ones with the same id ([`Catalogue::merge`]). Matching returns evidence: the
//! matching line (1-based within the text) and the byte span of each matcher hit.

use std::collections::BTreeMap;
use std::fmt;

use regex::{Regex, RegexBuilder, RegexSet};
use serde::{Deserialize, Serialize};

/// The built-in catalogue source.
pub const DEFAULT_CATALOGUE: &str = include_str!("../signatures/default.toml");

/// Who has to act on a failure of this kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureClass {
    /// CI infrastructure or cloud capacity.
    Infra,
    /// The product under test.
    Product,
    /// The test itself.
    Test,
    /// Job or CI configuration.
    CiConfig,
    /// Expected behaviour.
    ByDesign,
}

impl FailureClass {
    /// The catalogue spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureClass::Infra => "infra",
            FailureClass::Product => "product",
            FailureClass::Test => "test",
            FailureClass::CiConfig => "ci-config",
            FailureClass::ByDesign => "by-design",
        }
    }
}

/// Where a signature applies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// The failures of CI jobs: test failure texts and build logs (the default).
    #[default]
    Jobs,
    /// Only the lines of a failed step of a release payload's job, where a broad line
    /// (a refused connection, a missing command) is the step's cause; in a test's
    /// failure text the same words often describe the product's bug.
    Payload,
    /// Both: job failures and payload steps.
    Both,
}

impl Scope {
    fn is_jobs(&self) -> bool {
        *self == Scope::Jobs
    }

    /// Applies to the failures of CI jobs.
    pub fn jobs(&self) -> bool {
        matches!(self, Scope::Jobs | Scope::Both)
    }

    /// Applies to the failed steps of a release payload's jobs.
    pub fn payload(&self) -> bool {
        matches!(self, Scope::Payload | Scope::Both)
    }
}

/// One matcher as written in TOML.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatcherSpec {
    /// Exact substring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub literal: Option<String>,
    /// Regular expression (Rust `regex` syntax).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
    /// Match case-insensitively.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub case_insensitive: bool,
}

/// One signature as written in TOML.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignatureSpec {
    /// Stable identifier.
    pub id: String,
    /// Human-readable name.
    pub name: String,
    /// Failure class.
    pub class: FailureClass,
    /// What to do about it.
    #[serde(default)]
    pub fix: String,
    /// A mechanical fix shape (a 1-8 line change sketch with the file to edit), when the
    /// fix is the same every time; signatures with one become Tier 2 actions.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub sketch: String,
    /// Issues, PRs, files, documents.
    #[serde(default)]
    pub references: Vec<String>,
    /// A passing cause (quota, capacity, throttling, a lost connection): the next run
    /// may pass without any change. Infrastructure signatures only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub transient: bool,
    /// Where it applies: `jobs` (the default), `payload` or `both`.
    #[serde(default, skip_serializing_if = "Scope::is_jobs")]
    pub scope: Scope,
    /// At least one must match.
    pub any: Vec<MatcherSpec>,
    /// Each must also match.
    #[serde(default)]
    pub all: Vec<MatcherSpec>,
    /// None may match.
    #[serde(default)]
    pub none: Vec<MatcherSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogueFile {
    #[serde(default)]
    signature: Vec<SignatureSpec>,
}

/// Errors loading a catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignatureError {
    /// The TOML does not parse or does not fit the schema.
    Toml(String),
    /// A signature is invalid (empty `any`, bad regex, matcher without literal/regex...).
    Invalid {
        /// Signature id.
        id: String,
        /// What is wrong.
        reason: String,
    },
}

impl fmt::Display for SignatureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SignatureError::Toml(e) => write!(f, "signature catalogue: {e}"),
            SignatureError::Invalid { id, reason } => write!(f, "signature {id}: {reason}"),
        }
    }
}

impl std::error::Error for SignatureError {}

#[derive(Debug, Clone)]
struct CompiledSignature {
    spec: SignatureSpec,
    any: Vec<Regex>,
    all: Vec<Regex>,
    none: Vec<Regex>,
}

fn compile_matcher(id: &str, m: &MatcherSpec) -> Result<Regex, SignatureError> {
    let pattern = match (&m.literal, &m.regex) {
        (Some(l), None) => regex::escape(l),
        (None, Some(r)) => r.clone(),
        _ => {
            return Err(SignatureError::Invalid {
                id: id.to_string(),
                reason: "a matcher needs exactly one of `literal` or `regex`".into(),
            })
        }
    };
    RegexBuilder::new(&pattern)
        .case_insensitive(m.case_insensitive)
        .size_limit(1 << 22)
        .build()
        .map_err(|e| SignatureError::Invalid { id: id.to_string(), reason: format!("bad regex: {e}") })
}

fn compile(spec: SignatureSpec) -> Result<CompiledSignature, SignatureError> {
    if spec.id.trim().is_empty() {
        return Err(SignatureError::Invalid { id: spec.name.clone(), reason: "empty id".into() });
    }
    if spec.any.is_empty() {
        return Err(SignatureError::Invalid {
            id: spec.id.clone(),
            reason: "`any` must list at least one matcher".into(),
        });
    }
    let c = |v: &[MatcherSpec]| -> Result<Vec<Regex>, SignatureError> {
        v.iter().map(|m| compile_matcher(&spec.id, m)).collect()
    };
    Ok(CompiledSignature { any: c(&spec.any)?, all: c(&spec.all)?, none: c(&spec.none)?, spec })
}

/// Where a signature matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignatureEvidence {
    /// 1-based line within the matched text (or the caller's line number for log lines).
    pub line: usize,
    /// Byte offset of the hit within the line.
    pub start: usize,
    /// Byte offset one past the hit within the line.
    pub end: usize,
    /// The line (capped at 1 KiB).
    pub text: String,
}

/// One signature that matched, with its evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignatureMatch {
    /// Signature id.
    pub id: String,
    /// Signature name.
    pub name: String,
    /// Failure class.
    pub class: FailureClass,
    /// Fix hint.
    pub fix: String,
    /// Mechanical fix shape, when the signature has one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub sketch: String,
    /// References.
    pub references: Vec<String>,
    /// A passing cause: the next run may pass without any change.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub transient: bool,
    /// Evidence for every `any`/`all` matcher hit (first hit of each).
    pub evidence: Vec<SignatureEvidence>,
}

/// A compiled catalogue.
#[derive(Debug, Clone)]
pub struct Catalogue {
    sigs: Vec<CompiledSignature>,
    prefilter: RegexSet,
}

impl Catalogue {
    /// The built-in catalogue for the failures of CI jobs (scope `jobs` or `both`).
    pub fn builtin() -> Catalogue {
        Catalogue::builtin_all().only(|s| s.scope.jobs())
    }

    /// The built-in catalogue for the failed steps of release payloads (scope
    /// `payload` or `both`).
    pub fn builtin_payload() -> Catalogue {
        Catalogue::builtin_all().only(|s| s.scope.payload())
    }

    /// The whole built-in catalogue, every scope.
    pub fn builtin_all() -> Catalogue {
        // The shipped file is tested; fall back to an empty catalogue rather than panic.
        Catalogue::from_toml(DEFAULT_CATALOGUE).unwrap_or_else(|_| Catalogue::empty())
    }

    /// A catalogue without signatures.
    pub fn empty() -> Catalogue {
        Catalogue { sigs: Vec::new(), prefilter: RegexSet::empty() }
    }

    /// Parse and compile a catalogue; ids must be unique within one file.
    pub fn from_toml(text: &str) -> Result<Catalogue, SignatureError> {
        let file: CatalogueFile = toml::from_str(text).map_err(|e| SignatureError::Toml(e.to_string()))?;
        let mut seen = std::collections::HashSet::new();
        let mut sigs = Vec::new();
        for s in file.signature {
            if !seen.insert(s.id.clone()) {
                return Err(SignatureError::Invalid { id: s.id, reason: "duplicate id".into() });
            }
            sigs.push(compile(s)?);
        }
        Catalogue::from_compiled(sigs)
    }

    fn from_compiled(sigs: Vec<CompiledSignature>) -> Result<Catalogue, SignatureError> {
        let patterns: Vec<String> = sigs
            .iter()
            .map(|s| s.any.iter().map(|r| format!("(?:{})", r.as_str())).collect::<Vec<_>>().join("|"))
            .collect();
        // The prefilter must honour per-matcher case-insensitivity: fold it into the pattern.
        let patterns: Vec<String> = sigs
            .iter()
            .zip(patterns)
            .map(|(s, p)| if s.spec.any.iter().any(|m| m.case_insensitive) { format!("(?i:{p})") } else { p })
            .collect();
        let prefilter = RegexSet::new(&patterns)
            .map_err(|e| SignatureError::Invalid { id: "(catalogue)".into(), reason: e.to_string() })?;
        Ok(Catalogue { sigs, prefilter })
    }

    /// The built-in catalogue extended/overridden by a user file.
    /// Like [`Catalogue::builtin`], only signatures for the failures of CI jobs.
    pub fn builtin_with(user_toml: &str) -> Result<Catalogue, SignatureError> {
        let mut c = Catalogue::from_toml(DEFAULT_CATALOGUE)?;
        c.merge(Catalogue::from_toml(user_toml)?)?;
        Ok(c.only(|s| s.scope.jobs()))
    }

    /// Add `other`'s signatures; one with an existing id replaces it in place.
    pub fn merge(&mut self, other: Catalogue) -> Result<(), SignatureError> {
        let mut sigs = std::mem::take(&mut self.sigs);
        for s in other.sigs {
            match sigs.iter().position(|x| x.spec.id == s.spec.id) {
                Some(i) => sigs[i] = s,
                None => sigs.push(s),
            }
        }
        *self = Catalogue::from_compiled(sigs)?;
        Ok(())
    }

    /// The signatures for which `keep` holds, in catalogue order.
    pub fn only(&self, keep: impl Fn(&SignatureSpec) -> bool) -> Catalogue {
        let sigs: Vec<CompiledSignature> = self.sigs.iter().filter(|s| keep(&s.spec)).cloned().collect();
        // the patterns compiled once already; recompiling the prefilter of a subset cannot fail
        Catalogue::from_compiled(sigs).unwrap_or_else(|_| Catalogue::empty())
    }

    /// The signature specs, in catalogue order.
    pub fn specs(&self) -> Vec<&SignatureSpec> {
        self.sigs.iter().map(|s| &s.spec).collect()
    }

    /// Number of signatures.
    pub fn len(&self) -> usize {
        self.sigs.len()
    }

    /// True when there are no signatures.
    pub fn is_empty(&self) -> bool {
        self.sigs.is_empty()
    }

    /// Signatures matching `text` (a failure text or excerpt), in catalogue order.
    pub fn match_text(&self, text: &str) -> Vec<SignatureMatch> {
        let candidates = self.prefilter.matches(text);
        if !candidates.matched_any() {
            return Vec::new();
        }
        let mut out = Vec::new();
        for i in candidates.iter() {
            let s = &self.sigs[i];
            if s.none.iter().any(|r| r.is_match(text)) {
                continue;
            }
            let mut evidence = Vec::new();
            let Some(first) = s.any.iter().find_map(|r| r.find(text)) else {
                continue;
            };
            evidence.push(evidence_at(text, first.start(), first.end()));
            let mut ok = true;
            for r in &s.all {
                match r.find(text) {
                    Some(m) => evidence.push(evidence_at(text, m.start(), m.end())),
                    None => {
                        ok = false;
                        break;
                    }
                }
            }
            if ok {
                out.push(to_match(s, evidence));
            }
        }
        out
    }

    /// Signatures matching log lines `(line number, text)`: `any` must hit one line, each `all`
    /// matcher some line, and no `none` matcher any line. Evidence uses the given numbers.
    pub fn match_lines<'a, I>(&self, lines: I) -> Vec<SignatureMatch>
    where
        I: IntoIterator<Item = (usize, &'a str)>,
    {
        // first hit per (signature, matcher kind/index)
        let mut any_hit: BTreeMap<usize, SignatureEvidence> = BTreeMap::new();
        let mut all_hit: BTreeMap<(usize, usize), SignatureEvidence> = BTreeMap::new();
        let mut excluded = vec![false; self.sigs.len()];
        for (no, line) in lines {
            for (i, s) in self.sigs.iter().enumerate() {
                if excluded[i] {
                    continue;
                }
                if s.none.iter().any(|r| r.is_match(line)) {
                    excluded[i] = true;
                    continue;
                }
                if let std::collections::btree_map::Entry::Vacant(e) = any_hit.entry(i) {
                    if let Some(m) = s.any.iter().find_map(|r| r.find(line)) {
                        e.insert(line_evidence(no, line, m.start(), m.end()));
                    }
                }
                for (j, r) in s.all.iter().enumerate() {
                    if let std::collections::btree_map::Entry::Vacant(e) = all_hit.entry((i, j)) {
                        if let Some(m) = r.find(line) {
                            e.insert(line_evidence(no, line, m.start(), m.end()));
                        }
                    }
                }
            }
        }
        let mut out = Vec::new();
        for (i, ev) in any_hit {
            let s = &self.sigs[i];
            if excluded[i] {
                continue;
            }
            let mut evidence = vec![ev];
            let mut ok = true;
            for j in 0..s.all.len() {
                match all_hit.get(&(i, j)) {
                    Some(e) => evidence.push(e.clone()),
                    None => {
                        ok = false;
                        break;
                    }
                }
            }
            if ok {
                out.push(to_match(s, evidence));
            }
        }
        out
    }
}

fn to_match(s: &CompiledSignature, evidence: Vec<SignatureEvidence>) -> SignatureMatch {
    SignatureMatch {
        id: s.spec.id.clone(),
        name: s.spec.name.clone(),
        class: s.spec.class,
        fix: s.spec.fix.clone(),
        sketch: s.spec.sketch.clone(),
        references: s.spec.references.clone(),
        transient: s.spec.transient,
        evidence,
    }
}

const EVIDENCE_CAP: usize = 1024;

fn cap(s: &str) -> String {
    if s.len() <= EVIDENCE_CAP {
        return s.to_string();
    }
    let mut end = EVIDENCE_CAP;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

fn line_evidence(no: usize, line: &str, start: usize, end: usize) -> SignatureEvidence {
    SignatureEvidence { line: no, start, end, text: cap(line) }
}

/// Evidence for a hit at byte `start..end` of a multi-line `text`.
fn evidence_at(text: &str, start: usize, end: usize) -> SignatureEvidence {
    let line_start = text[..start].rfind(['\n', '\r']).map_or(0, |i| i + 1);
    let line_end = text[start..].find(['\n', '\r']).map_or(text.len(), |i| start + i);
    let no = crate::lines::count_lines(&text.as_bytes()[..line_start]) + 1;
    SignatureEvidence {
        line: no,
        start: start - line_start,
        end: end.min(line_end) - line_start,
        text: cap(&text[line_start..line_end]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_parses() {
        let c = Catalogue::from_toml(DEFAULT_CATALOGUE).expect("builtin");
        assert!(c.len() >= 13);
    }

    #[test]
    fn evidence_points_at_line() {
        let c = Catalogue::builtin();
        let m = c.match_text("first\nsecond: PublicIPCountLimitReached here\n");
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].evidence[0].line, 2);
        assert_eq!(&m[0].evidence[0].text[m[0].evidence[0].start..m[0].evidence[0].end], "PublicIPCountLimitReached");
    }
}
