//! Build citations: URLs of one Prow build (Spyglass, GCS, gcsweb) and bare
//! `job/build-id` pairs, checked against a ledger of builds ([`BuildUrlResolver`]: the
//! store in the CLI, [`KnownBuilds`] for a fixed set); and what the report says each
//! build's result was ("the newest passing run", "failed build"), compared with the
//! stored result. A job the ledger does not know is a finding only when the ledger
//! covers that job's bucket.

use crate::outcome::{ClaimRecord, Ctx, Stats, Verdict};
use crate::prose::{self, TokKind};
use crate::report::{Report, ReportFormat};
use citriage_model::Evidence;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

/// One build a report cites.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BuildUrl {
    /// The URL, or `job/id` as written.
    pub url: String,
    pub job: String,
    pub build_id: String,
    /// The GCS bucket, when the URL names it.
    pub bucket: Option<String>,
    /// `logs` (periodics, postsubmits) or `pr-logs` (presubmits).
    pub tree: String,
}

impl BuildUrl {
    /// `bucket/tree` (what a ledger covers), when the bucket is known.
    pub fn area(&self) -> Option<String> {
        self.bucket.as_ref().map(|b| format!("{b}/{}", self.tree))
    }
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
    let bucket = logs.checked_sub(1).map(|i| segs[i]).filter(|b| !["gs", "gcs", "view", "storage"].contains(b));
    for i in (logs + 2)..segs.len() {
        let s = segs[i];
        if (10..=20).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit()) {
            return Some(BuildUrl {
                url: url.to_string(),
                job: segs[i - 1].to_string(),
                build_id: s.to_string(),
                bucket: bucket.map(str::to_string),
                tree: segs[logs].to_string(),
            });
        }
    }
    None
}

/// The answer to "is this build real, and how did it end?".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum BuildAnswer {
    /// In the ledger, with its result (`SUCCESS`, `FAILURE`, `ERROR`, `ABORTED`) when
    /// it finished.
    Known {
        outcome: Option<String>,
        evidence: Option<Evidence>,
    },
    /// Definitely not a build: the ledger knows the job and not this build, or it
    /// covers the job's bucket and has no such job.
    Missing {
        why: String,
    },
    Unchecked {
        why: String,
    },
}

/// Anything that can check a build: the store's ledger, a fetcher, a fixed set.
pub trait BuildUrlResolver {
    fn check(&self, b: &BuildUrl) -> BuildAnswer;
}

/// No ledger: every build is unchecked.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoBuilds;

impl BuildUrlResolver for NoBuilds {
    fn check(&self, _b: &BuildUrl) -> BuildAnswer {
        BuildAnswer::Unchecked { why: "no build ledger was given".into() }
    }
}

/// A fixed set of builds (job, build id) with their results, and the areas
/// (`bucket/logs`, `bucket/pr-logs`) the set covers completely: a job missing from a
/// covered area does not exist; elsewhere it is unchecked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KnownBuilds {
    pub builds: BTreeMap<(String, String), Option<String>>,
    pub covered: BTreeSet<String>,
}

impl KnownBuilds {
    /// From (job, build id) pairs, results unknown, no covered area.
    pub fn new<I: IntoIterator<Item = (String, String)>>(builds: I) -> KnownBuilds {
        KnownBuilds { builds: builds.into_iter().map(|k| (k, None)).collect(), covered: BTreeSet::new() }
    }

    /// From URLs (unrecognised ones are ignored); their areas count as covered.
    pub fn from_urls<'a, I: IntoIterator<Item = &'a str>>(urls: I) -> KnownBuilds {
        let mut k = KnownBuilds::default();
        for b in urls.into_iter().filter_map(parse_build_url) {
            if let Some(a) = b.area() {
                k.covered.insert(a);
            }
            k.builds.insert((b.job, b.build_id), None);
        }
        k
    }

    /// Adds a build with its result.
    pub fn with(mut self, job: &str, id: &str, outcome: Option<&str>) -> KnownBuilds {
        self.builds.insert((job.to_string(), id.to_string()), outcome.map(str::to_string));
        self
    }
}

impl BuildUrlResolver for KnownBuilds {
    fn check(&self, b: &BuildUrl) -> BuildAnswer {
        if let Some(outcome) = self.builds.get(&(b.job.clone(), b.build_id.clone())) {
            return BuildAnswer::Known { outcome: outcome.clone(), evidence: None };
        }
        let job_known = self.builds.keys().any(|(j, _)| *j == b.job);
        if job_known {
            BuildAnswer::Missing { why: format!("build {} of {} is not in the ledger", b.build_id, b.job) }
        } else if b.area().is_some_and(|a| self.covered.contains(&a)) {
            BuildAnswer::Missing {
                why: format!("the ledger holds {}'s builds and has no job {}", b.area().unwrap_or_default(), b.job),
            }
        } else {
            BuildAnswer::Unchecked { why: format!("no build of {} is in the ledger", b.job) }
        }
    }
}

fn url_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(r#"https?://[^\s<>()\[\]|`"']+"#).expect("static regex"))
}

fn job_id_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(r"\b([a-z0-9][a-z0-9._-]{2,}[a-z0-9])/([0-9]{16,20})\b").expect("static regex"))
}

/// URL spans of a line, trailing punctuation trimmed.
pub(crate) fn url_spans(line: &str) -> Vec<(usize, usize, String)> {
    url_re()
        .find_iter(line)
        .map(|m| {
            let u = m.as_str().trim_end_matches(['.', ',', ';', ':', '!', '?', '*', '_']);
            (m.start(), m.start() + u.len(), u.to_string())
        })
        .collect()
}

/// A build cited on a report line: (line, byte span, the build).
pub type Citation = (usize, (usize, usize), BuildUrl);

/// Every build citation with its report line and byte span: URLs, and `job/id`
/// outside URLs.
pub fn extract_builds(report: &Report) -> Vec<Citation> {
    let mut out = Vec::new();
    for (i, line) in report.lines.iter().enumerate() {
        let urls = url_spans(line);
        for (a, b, u) in &urls {
            if let Some(p) = parse_build_url(u) {
                out.push((i + 1, (*a, *b), p));
            }
        }
        for c in job_id_re().captures_iter(line) {
            let m = c.get(0).expect("match");
            if urls.iter().any(|(a, b, _)| m.start() >= *a && m.start() < *b) {
                continue;
            }
            if line[..m.start()].ends_with('/') {
                continue;
            }
            out.push((
                i + 1,
                (m.start(), m.end()),
                BuildUrl {
                    url: m.as_str().to_string(),
                    job: c[1].to_string(),
                    build_id: c[2].to_string(),
                    bucket: None,
                    tree: "logs".into(),
                },
            ));
        }
    }
    out
}

/// Every build URL with its report line (URLs only).
pub fn extract_build_urls(report: &Report) -> Vec<(usize, BuildUrl)> {
    extract_builds(report)
        .into_iter()
        .filter(|(_, _, b)| b.bucket.is_some() || b.url.contains("://"))
        .map(|(l, _, b)| (l, b))
        .collect()
}

fn bare_build_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(r"\b[0-9]{16,20}\b").expect("static regex"))
}

/// Build ids written without a URL.
pub(crate) fn bare_build_ids(line: &str) -> usize {
    let urls = url_spans(line);
    bare_build_re().find_iter(line).filter(|m| !urls.iter().any(|(a, b, _)| m.start() >= *a && m.end() <= *b)).count()
}

/// A result word near a build citation: `Some(true)` passed, `Some(false)` failed.
fn result_word(w: &str) -> Option<bool> {
    match w {
        "pass" | "passes" | "passed" | "passing" | "green" | "succeeded" | "success" | "successful" | "succeeds" => {
            Some(true)
        }
        "fail" | "fails" | "failed" | "failing" | "failure" | "red" | "errored" | "broken" => Some(false),
        _ => None,
    }
}

const BUILD_NOUNS: &[&str] = &["run", "runs", "build", "builds", "job", "rerun", "retest", "attempt", "lane", "sample"];
const GLUE: &[&str] = &[
    "the",
    "a",
    "an",
    "is",
    "was",
    "were",
    "newest",
    "latest",
    "last",
    "most",
    "recent",
    "first",
    "still",
    "now",
    "post-merge",
    "today",
    "again",
    "and",
    "which",
    "that",
    "it",
    "build",
    "run",
    "here",
    "see",
    "in",
    "at",
    "as",
];

/// The result the report claims for the build cited at `span` on `line`: a result
/// word attached to the citation, or to a build noun next to it, in the same clause.
fn claimed_result(line: &str, span: (usize, usize), markdown: bool) -> Option<(bool, String)> {
    let toks = prose::tokenize(line, &[span], markdown);
    let at = toks.iter().position(|t| t.kind == TokKind::Ref(0))?;
    let cl = prose::clauses(&toks);
    let (cs, ce, q) = cl.iter().copied().find(|(a, b, _)| at >= *a && at < *b)?;
    if q {
        return None;
    }
    // Words a few tokens either side, through glue and brackets.
    let mut cands: Vec<usize> = Vec::new();
    let mut k = at;
    let mut steps = 0;
    while k > cs && steps < 8 {
        k -= 1;
        let t = &toks[k];
        if t.kind == TokKind::Word && result_word(&t.lower).is_some() {
            cands.push(k);
            break;
        }
        let glue = t.kind == TokKind::Punct && ["(", "[", "]", ":", "—", "–", "-", ","].contains(&t.text.as_str())
            || t.kind == TokKind::Word
                && (GLUE.contains(&t.lower.as_str())
                    || BUILD_NOUNS.contains(&t.lower.as_str())
                    || t.text.bytes().all(|b| b.is_ascii_digit()))
            || matches!(t.kind, TokKind::Date | TokKind::Time);
        if !glue {
            break;
        }
        steps += 1;
    }
    let mut k = at + 1;
    steps = 0;
    while k < ce && steps < 6 {
        let t = &toks[k];
        if t.kind == TokKind::Word && result_word(&t.lower).is_some() {
            cands.push(k);
            break;
        }
        let glue = t.kind == TokKind::Punct && ["(", ")", "]", ":", "—", "–", "-", ","].contains(&t.text.as_str())
            || t.kind == TokKind::Word && (GLUE.contains(&t.lower.as_str()) || BUILD_NOUNS.contains(&t.lower.as_str()));
        if !glue {
            break;
        }
        steps += 1;
        k += 1;
    }
    // A Markdown link's text speaks for its URL: `[passed after the fix](url)`.
    if cands.is_empty() && at >= 2 && toks[at - 1].is_punct("(") && toks[at - 2].is_punct("]") {
        if let Some(open) = prose::open_paren(&toks, at - 2) {
            if let Some(k) =
                (open + 1..at - 2).find(|k| toks[*k].kind == TokKind::Word && result_word(&toks[*k].lower).is_some())
            {
                cands.push(k);
            }
        }
    }
    let k = *cands.first()?;
    let t = &toks[k];
    if t.quoted {
        return None;
    }
    let (m, negated, _) = prose::modality(&toks, cs, k, false);
    if m != prose::Modality::Asserted {
        return None;
    }
    // A test failing in a build says nothing about the build's result.
    let before = toks[cs..k].iter().rev().find(|x| x.kind == TokKind::Word).map(|x| x.text.clone()).unwrap_or_default();
    if before.starts_with("Test") || before.contains('.') && !BUILD_NOUNS.contains(&before.to_lowercase().as_str()) {
        return None;
    }
    let passed = result_word(&t.lower)?;
    Some((passed != negated, t.text.clone()))
}

fn is_success(outcome: &str) -> bool {
    outcome.eq_ignore_ascii_case("success") || outcome.eq_ignore_ascii_case("passed")
}

pub(crate) fn check_builds(cx: &mut Ctx<'_>, resolver: &dyn BuildUrlResolver, stats: &mut Stats) {
    let report = cx.report;
    let builds = extract_builds(report);
    if report.format == ReportFormat::Rendered && stats.bare_build_ids > 0 {
        let why = format!(
            "rendered text: {} bare build id(s) may have been links whose URLs are lost; only `job/id` forms can be checked",
            stats.bare_build_ids
        );
        if builds.is_empty() {
            cx.na.insert("build-url", why);
        } else {
            cx.notes.insert("build-url", why);
        }
    }
    let mut groups: BTreeMap<(String, String), Vec<Citation>> = BTreeMap::new();
    for (line, span, b) in builds {
        if report.fenced.contains(&line) {
            continue;
        }
        groups.entry((b.job.clone(), b.build_id.clone())).or_default().push((line, span, b));
    }
    stats.build_urls_distinct = groups.len();
    let markdown = report.format == ReportFormat::Markdown;
    for ((job, id), uses) in groups {
        let b = &uses[0].2;
        let others: Vec<usize> = uses.iter().skip(1).map(|(l, _, _)| *l).collect();
        let answer = resolver.check(b);
        match &answer {
            BuildAnswer::Known { .. } => stats.build_urls_known += 1,
            BuildAnswer::Missing { why } => cx.flag(
                uses[0].0,
                "build-url",
                format!("{} — {why}; a cited build must have been fetched", b.url),
                Vec::new(),
            ),
            BuildAnswer::Unchecked { why } => cx.skip(uses[0].0, "build-url", b.url.clone(), why.clone(), others),
        }
        // What the report says each citation's result was.
        for (line, span, u) in &uses {
            let Some((passed, word)) = claimed_result(report.line(*line), *span, markdown) else { continue };
            let claim = if passed { "passed" } else { "failed" };
            let (verdict, detail, evidence) = match &answer {
                BuildAnswer::Known { outcome: Some(o), evidence } => {
                    let ok = is_success(o) == passed;
                    (
                        if ok { Verdict::Verified } else { Verdict::False },
                        format!("the store records {o} for build {id} of {job}"),
                        evidence.iter().cloned().collect::<Vec<_>>(),
                    )
                }
                BuildAnswer::Known { outcome: None, .. } => (
                    Verdict::Unchecked,
                    "the build has no recorded result (still running or unfinished)".into(),
                    Vec::new(),
                ),
                BuildAnswer::Missing { why } => (Verdict::False, why.clone(), Vec::new()),
                BuildAnswer::Unchecked { why } => (Verdict::Unchecked, why.clone(), Vec::new()),
            };
            if verdict == Verdict::False && matches!(answer, BuildAnswer::Known { .. }) {
                cx.flag(
                    *line,
                    "build-result",
                    format!("{} is called {claim} (\"{word}\") but {detail}", u.url),
                    evidence.clone(),
                );
            }
            cx.claims.push(ClaimRecord {
                line: *line,
                kind: "build-result".into(),
                subject: u.url.clone(),
                claim: claim.into(),
                words: word,
                verdict,
                detail,
                evidence,
            });
        }
        let (verdict, detail) = match &answer {
            BuildAnswer::Known { outcome, .. } => (
                Verdict::Verified,
                format!("in the ledger{}", outcome.as_ref().map(|o| format!(" ({o})")).unwrap_or_default()),
            ),
            BuildAnswer::Missing { why } => (Verdict::False, why.clone()),
            BuildAnswer::Unchecked { why } => (Verdict::Unchecked, why.clone()),
        };
        cx.claims.push(ClaimRecord {
            line: uses[0].0,
            kind: "build-url".into(),
            subject: b.url.clone(),
            claim: "is a build".into(),
            words: String::new(),
            verdict,
            detail,
            evidence: match &answer {
                BuildAnswer::Known { evidence, .. } => evidence.iter().cloned().collect(),
                _ => Vec::new(),
            },
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_urls() {
        let b =
            parse_build_url("https://prow.k8s.io/view/gs/kubernetes-ci-logs/logs/ci-x/2053458703197147136").unwrap();
        assert_eq!((b.job.as_str(), b.build_id.as_str()), ("ci-x", "2053458703197147136"));
        assert_eq!(b.area().as_deref(), Some("kubernetes-ci-logs/logs"));
        let p = parse_build_url(
            "https://storage.googleapis.com/kubernetes-ci-logs/pr-logs/pull/1/pull-y/2124243279412937136/build-log.txt",
        )
        .unwrap();
        assert_eq!((p.job.as_str(), p.area().as_deref()), ("pull-y", Some("kubernetes-ci-logs/pr-logs")));
        assert!(parse_build_url("https://storage.googleapis.com/k8s-metrics/failures-latest.json").is_none());
        assert!(parse_build_url("https://github.com/o/r/pull/2053458703").is_none());
        let k = KnownBuilds::from_urls(["https://prow.k8s.io/view/gs/b/logs/ci-x/2053458703197147136"]);
        let same_build_other_host =
            parse_build_url("https://storage.googleapis.com/b/logs/ci-x/2053458703197147136/build-log.txt").unwrap();
        assert!(matches!(k.check(&same_build_other_host), BuildAnswer::Known { .. }));
        let other_job = parse_build_url("https://prow.k8s.io/view/gs/b/logs/ci-y/2053458703197147136").unwrap();
        assert!(matches!(k.check(&other_job), BuildAnswer::Missing { .. }), "bucket b is covered");
        let other_bucket = parse_build_url("https://prow.k8s.io/view/gs/c/logs/ci-y/2053458703197147136").unwrap();
        assert!(matches!(k.check(&other_bucket), BuildAnswer::Unchecked { .. }));
    }

    #[test]
    fn result_claims() {
        let r = |line: &str, needle: &str| {
            let a = line.find(needle).unwrap();
            claimed_result(line, (a, a + needle.len()), true).map(|(p, _)| p)
        };
        let u = "https://prow.k8s.io/view/gs/b/logs/ci-x/2053458703197147136";
        assert_eq!(r(&format!("The newest passing run is [2053458703197147136]({u})."), u), Some(true));
        assert_eq!(
            r(&format!("The newest passing run is [2053458703197147136]({u})."), "2053458703197147136"),
            Some(true)
        );
        assert_eq!(r(&format!("AWS variant: green post-merge (build {u})."), u), Some(true));
        assert_eq!(r(&format!("Sample build: {u} shows the timeout."), u), None);
        assert_eq!(r(&format!("TestFoo fails in {u}."), u), None);
        assert_eq!(r(&format!("the failed build {u} shows it"), u), Some(false));
        assert_eq!(r(&format!("if the rerun {u} passes, close it"), u), None);
        assert_eq!(r(&format!("the AWS leg [passed after the fix]({u})."), u), Some(true));
    }
}
