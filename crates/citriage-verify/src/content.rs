//! Claims about code: `path:line` citations (plain, `repo:path:line`, GitHub blob
//! URLs with `#L12-L20`), what the report quotes or names as being at that line
//! (a code span or a quoted string attached to the citation), and commit SHAs.
//! A citation must resolve in the checkout of its repository; a quote must be on the
//! cited line or range (a bare function name may also be the function the line sits
//! in); when it is elsewhere the finding says where. A quote that matched at the
//! commit the citation names but has moved since is a note with its new line. Commit
//! SHAs are looked up in a checkout of their repository and on GitHub.

use crate::code::{is_hex_sha, CodeAnswer, CodeResolver, CommitAnswer, FileAnswer, FileText};
use crate::outcome::{ClaimRecord, Ctx, Stats, Verdict};
use crate::report::{code_spans, Report, ReportFormat};
use crate::tense::When;
use citriage_github::{RefContext, RefResolver, RepoRef};
use citriage_model::{Day, Evidence, EvidenceKind};
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// A `path:line` claim in the report.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FileLineRef {
    pub line: usize,
    pub raw: String,
    /// The `owner/repo:` or `repo:` prefix (or the repository of a blob URL).
    pub repo: Option<String>,
    pub path: String,
    pub start: usize,
    pub end: usize,
    /// Further lines listed with commas (`file.go:3306,3458`).
    pub more: Vec<usize>,
    /// The commit the citation names (a blob URL's SHA, `@sha`).
    pub commit: Option<String>,
    /// Byte span on the report line.
    pub span: (usize, usize),
}

const EXTENSIONS: &str = "go|py|sh|bash|zsh|ps1|yaml|yml|json|jsonnet|libsonnet|md|txt|rs|js|mjs|ts|tsx|jsx|c|h|cc|cpp|hpp|java|kt|rb|toml|sql|mk|tf|proto|xml|cfg|conf|ini|bzl|bazel|star|lua|php|cs|swift|scala|gradle|properties|tpl|j2|html|css|rst|adoc|mod|sum|csv|service|tmpl|template|cue|nix|pl|r";

pub(crate) fn file_line_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(&format!(
            r"(?:([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)?)(?:@([0-9a-f]{{7,40}}))?:)?((?:[A-Za-z0-9_.@+-]+/)*(?:[A-Za-z0-9_.@+-]*\.(?:{EXTENSIONS})|Makefile|Dockerfile|Containerfile|OWNERS|OWNERS_ALIASES|BUILD|Jenkinsfile)):([0-9]{{1,6}})(?:-([0-9]{{1,6}}))?((?:,\s?[0-9]{{1,6}}\b)*)"
        ))
        .expect("static regex")
    })
}

fn blob_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"https?://github\.com/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)/blob/([A-Za-z0-9_.-]+)/([^\s#?)\]>`]+)#L([0-9]{1,6})(?:-L([0-9]{1,6}))?")
            .expect("static regex")
    })
}

/// Every `path:line` claim (fenced blocks included: diff sketches name files too).
pub fn extract_file_lines(report: &Report) -> Vec<FileLineRef> {
    let mut out = Vec::new();
    for (i, line) in report.lines.iter().enumerate() {
        let urls = crate::builds::url_spans(line);
        for c in blob_re().captures_iter(line) {
            let m = c.get(0).expect("match");
            let (Some(a), Some(path)) = (c.get(4).and_then(|x| x.as_str().parse::<usize>().ok()), c.get(3)) else {
                continue;
            };
            if a == 0 {
                continue;
            }
            let at = c.get(2).map(|x| x.as_str().to_string()).filter(|r| is_hex_sha(r));
            let b = c.get(5).and_then(|x| x.as_str().parse::<usize>().ok()).filter(|b| *b >= a).unwrap_or(a);
            out.push(FileLineRef {
                line: i + 1,
                raw: m.as_str().to_string(),
                repo: c.get(1).map(|x| x.as_str().to_string()),
                path: path.as_str().to_string(),
                start: a,
                end: b,
                more: Vec::new(),
                commit: at,
                span: (m.start(), m.end()),
            });
        }
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
            let (Some(path), Some(a)) = (c.get(3), c.get(4).and_then(|x| x.as_str().parse::<usize>().ok())) else {
                continue;
            };
            if a == 0 {
                continue;
            }
            let b = c.get(5).and_then(|x| x.as_str().parse::<usize>().ok()).filter(|b| *b >= a).unwrap_or(a);
            let more: Vec<usize> = c
                .get(6)
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
                commit: c.get(2).map(|x| x.as_str().to_string()),
                span: (m.start(), m.end()),
            });
        }
    }
    out
}

// ---- what the report says is at a line -------------------------------------------------

/// Words allowed between a quote and the citation it is attached to.
const ATTACH: &[&str] = &[
    "at",
    "in",
    "on",
    "line",
    "lines",
    "from",
    "is",
    "are",
    "sits",
    "lives",
    "defined",
    "declared",
    "called",
    "set",
    "pinned",
    "hardcoded",
    "hard-coded",
    "says",
    "reads",
    "has",
    "contains",
    "calls",
    "sets",
    "pins",
    "defines",
    "declares",
    "returns",
    "uses",
    "emits",
    "runs",
    "shows",
    "holds",
    "passes",
    "invokes",
    "still",
    "currently",
    "which",
    "where",
    "the",
    "a",
    "an",
    "change",
    "changes",
    "replace",
    "replaces",
    "bump",
    "switch",
    "with",
    "its",
    "see",
    "whose",
    "of",
    "does",
    "do",
    "checks",
    "tests",
    "compares",
    "assigns",
    "now",
    "also",
    "only",
    "just",
    "literally",
    "exactly",
    "already",
    "there",
    // Claims about the past (`that sat at`, `was at`, `used to read`).
    "that",
    "sat",
    "stood",
    "lived",
    "was",
    "were",
    "had",
    "read",
    "held",
    "previously",
    "originally",
    "formerly",
];

/// Plural nouns that end like verbs (`jobs`, `builds`): not the verb of a clause whose
/// subject is the citation.
const NOT_VERBS: &[&str] = &[
    "jobs", "lanes", "builds", "logs", "files", "images", "pods", "nodes", "tags", "names", "values", "flakes",
    "failures", "errors", "tests", "lines", "bytes", "seconds", "minutes", "hours", "days", "times", "runners", "this",
    "its", "his", "is", "was", "as", "has", "does", "us", "thus", "plus", "always", "across",
];

/// Verbs in their base form that state what a range or several lines do (`:3306,3458
/// call X`), as opposed to the imperative of a change sketch (`use X`, `bump X`).
const BASE_VERBS: &[&str] = &[
    "call", "read", "say", "contain", "set", "pin", "define", "declare", "return", "hold", "pass", "invoke", "emit",
    "run", "check", "compare", "assign", "show", "have", "do", "poll", "wait", "build", "start",
];

/// A present-tense verb whose subject is the citation (`polls`, `computes`, `builds`).
fn verb_3s(w: &str) -> bool {
    w.len() >= 4
        && w.ends_with('s')
        && !w.ends_with("ss")
        && !w.ends_with("us")
        && !w.ends_with("is")
        && w.chars().all(|c| c.is_ascii_lowercase() || c == '-')
        && !NOT_VERBS.contains(&w)
}

/// Clause boundaries of a line (or table cell) as byte positions.
fn clause_range(line: &str, at: usize) -> (usize, usize) {
    let code = code_spans(line);
    let in_code = |i: usize| code.iter().any(|(a, b)| i > *a && i < *b);
    let bytes = line.as_bytes();
    let is_boundary = |i: usize| -> bool {
        if in_code(i) {
            return false;
        }
        match bytes[i] {
            b';' | b'|' => true,
            b'.' => bytes.get(i + 1).is_none_or(|c| *c == b' ') && (i == 0 || bytes[i - 1] != b'.'),
            _ => false,
        }
    };
    let start = (0..at).rev().find(|i| is_boundary(*i)).map(|i| i + 1).unwrap_or(0);
    let end = (at..bytes.len()).find(|i| is_boundary(*i)).unwrap_or(bytes.len());
    (start, end)
}

/// A quote attached to a citation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Quote {
    pub text: String,
    /// Byte span on the line.
    pub span: (usize, usize),
}

fn quote_candidates(line: &str, lo: usize, hi: usize, markdown: bool) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    if markdown {
        for (a, b) in code_spans(line) {
            if a >= lo && b <= hi {
                let inner = line[a..b].trim_matches('`').trim().to_string();
                out.push((a, b, inner));
            }
        }
    }
    let masked = if markdown { crate::report::without_code(line) } else { line.to_string() };
    for (a, b) in crate::prose::quoted_ranges(&masked) {
        if a >= lo && b <= hi && masked[a..b].starts_with('"') {
            out.push((a, b, line[a + 1..b - 1].to_string()));
        }
    }
    out.sort();
    out
}

/// How well a quote at `a..b` attaches to the citation at `span`: `None` when it does
/// not (other words in between, another citation in between, the new side of a change
/// sketch); else a score, lower is closer (commas and `and` in the gap separate).
fn attach_score(
    line: &str,
    cands: &[(usize, usize, String)],
    a: usize,
    b: usize,
    span: (usize, usize),
    others: &[(usize, usize)],
    plural: bool,
) -> Option<usize> {
    let quote_after = a >= span.1;
    // A verb outside the list takes code, or a quoted string that looks like code; a
    // quoted phrase of plain words after it is a term (`counts "always failing" as`).
    let looks_like_code =
        line[a..].starts_with('`') || line[a..b].chars().any(|c| c.is_ascii_digit() || "*()._=/:<>[]{}%$-".contains(c));
    let (ga, gb) = if b <= span.0 {
        (b, span.0)
    } else if a >= span.1 {
        (span.1, a)
    } else {
        return None;
    };
    if others.iter().any(|(oa, ob)| *oa >= ga && *ob <= gb && (*oa, *ob) != span) {
        return None;
    }
    let mut gap = line[ga..gb].to_string();
    // Other quotes in between (`x` → `y` before `at file:line`).
    for (c, d, _) in cands {
        if *c >= ga && *d <= gb {
            gap.replace_range(c - ga..d - ga, &" ".repeat(d - c));
        }
    }
    let arrow_between = line[ga..gb].contains('→') || line[ga..gb].contains("->");
    let words: Vec<String> = gap
        .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | ':' | ',' | '—' | '–' | '=' | '[' | ']'))
        .map(|w| w.trim_matches(|c: char| matches!(c, '*' | '_')).to_ascii_lowercase())
        .filter(|w| !w.is_empty() && w != "-" && w != "→" && w != "->")
        .collect();
    // Another quote in between is allowed only as the new side of a change sketch
    // before the citation (`x` → `y` at file:line, `x` to `y` in file:line).
    let between = cands.iter().any(|(c, d, _)| *c >= ga && *d <= gb);
    let connector = arrow_between || words.iter().any(|w| ["to", "with", "into"].contains(&w.as_str()));
    if between && !(b <= span.0 && connector) {
        return None;
    }
    // `file:12 used to run X` says what the line did.
    let habit = words.windows(2).any(|p| p[0] == "used" && p[1] == "to");
    // The citation as the clause's subject (`file:12 polls with X`) may take any verb.
    let allowed = |w: &str| {
        ATTACH.contains(&w)
            || (habit && (w == "used" || w == "to" || BASE_VERBS.contains(&w)))
            || (between && ["to", "with", "into", "by"].contains(&w))
            || (quote_after && looks_like_code && verb_3s(w))
            || (quote_after && looks_like_code && plural && BASE_VERBS.contains(&w))
    };
    if words.len() > 5 || !words.iter().all(|w| allowed(w.as_str())) {
        return None;
    }
    // A quote after the citation and past an arrow is the new text.
    if a >= span.1 && arrow_between {
        return None;
    }
    let separators = gap.matches([',', ';']).count() + words.iter().filter(|w| *w == "and").count();
    Some(words.len() + 3 * separators)
}

/// A citation written as a code span (`` `a/b.go:12` ``) reaches to its backticks.
fn with_code_span(line: &str, span: (usize, usize), markdown: bool) -> (usize, usize) {
    if !markdown {
        return span;
    }
    code_spans(line).into_iter().find(|(a, b)| *a <= span.0 && *b >= span.1).unwrap_or(span)
}

/// The quotes attached to the citation at `span`: each quote of the clause goes to the
/// citation it attaches to most closely (`others` are the line's other citations).
/// `plural`: the citation names a range or several lines (`:3306,3458 call X`).
pub(crate) fn attached_quotes(
    line: &str,
    span: (usize, usize),
    others: &[(usize, usize)],
    markdown: bool,
    plural: bool,
) -> Vec<Quote> {
    let (lo, hi) = clause_range(line, span.0);
    let cands = quote_candidates(line, lo, hi, markdown);
    let own = with_code_span(line, span, markdown);
    let wide: Vec<(usize, usize)> = others.iter().map(|o| with_code_span(line, *o, markdown)).collect();
    let mut out = Vec::new();
    for (a, b, text) in &cands {
        // The citation itself, or another citation, in a code span.
        if *a <= span.0 && *b >= span.1 || others.iter().any(|(oa, ob)| a <= oa && b >= ob) {
            continue;
        }
        if file_line_re().is_match(text) || text.len() < 2 || text.chars().filter(|c| !c.is_whitespace()).count() < 2 {
            continue;
        }
        // The replacement side of a change sketch (`x` → `y`, `x` to `y`).
        let before = line[..*a].trim_end();
        if before.ends_with('→') || before.ends_with("->") || before.ends_with("=>") {
            continue;
        }
        let prev_word = before.rsplit(|c: char| c.is_whitespace()).next().unwrap_or("").to_ascii_lowercase();
        // `with` introduces the new text only after a verb of replacing (`replace x with
        // y`); `polls with x` says what is there.
        let replacing = {
            let head = line[lo..*a].to_ascii_lowercase();
            ["replace", "swap", "substitute"].iter().any(|v| head.contains(v))
        };
        // `replace x at a.go:12 with a y`: y is the new text.
        let with_before = *a >= own.1 && line[own.1..*a].split_whitespace().any(|w| w.eq_ignore_ascii_case("with"));
        if prev_word == "to" || prev_word == "into" || ((prev_word == "with" || with_before) && replacing) {
            continue;
        }
        let Some(mine) = attach_score(line, &cands, *a, *b, own, &wide, plural) else { continue };
        // Another citation of the clause that the quote attaches to more closely takes it;
        // on a tie, the citation after the quote (`x` (file:line)) does.
        let better = wide.iter().filter(|o| **o != own && o.0 >= lo && o.1 <= hi).any(|o| {
            attach_score(line, &cands, *a, *b, *o, &wide, false)
                .is_some_and(|theirs| theirs < mine || (theirs == mine && o.0 >= *b && own.1 <= *a))
        });
        if better {
            continue;
        }
        out.push(Quote { text: text.clone(), span: (*a, *b) });
    }
    out
}

fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The pieces of a quote that must appear in order (`...` and `…` elide text).
fn pieces(q: &str) -> Vec<String> {
    q.replace('…', "...").split("...").map(norm).filter(|p| !p.is_empty()).collect()
}

fn contains_in_order(hay: &str, parts: &[String]) -> bool {
    let hay = norm(hay);
    let mut from = 0;
    for p in parts {
        match hay[from..].find(p.as_str()) {
            Some(i) => from += i + p.len(),
            None => return false,
        }
    }
    !parts.is_empty()
}

fn matches_at(lines: &[String], a: usize, b: usize, parts: &[String]) -> bool {
    if a == 0 || a > lines.len() {
        return false;
    }
    let b = b.min(lines.len());
    contains_in_order(&lines[a - 1..b].join(" "), parts)
        || (parts.len() == 1 && {
            // Quotes with surrounding quotation marks or a trailing `;` / `,` still match.
            let p = parts[0].trim_matches(|c| c == '"' || c == '\'' || c == ';' || c == ',').to_string();
            !p.is_empty() && contains_in_order(&lines[a - 1..b].join(" "), &[p])
        })
}

fn identifier(q: &str) -> Option<&str> {
    let t = q.trim().trim_end_matches("()");
    let t = t.rsplit('.').next().unwrap_or(t);
    (t.len() >= 3
        && t.chars().all(|c| c.is_alphanumeric() || c == '_')
        && t.chars().next().is_some_and(|c| !c.is_ascii_digit()))
    .then_some(t)
}

/// The line (1-based) of the definition enclosing `line` named `name`, if `line` lies
/// in a function, type or class of that name.
fn enclosing_definition(lines: &[String], line: usize, name: &str) -> Option<usize> {
    static DEF: OnceLock<Regex> = OnceLock::new();
    let def = DEF.get_or_init(|| {
        Regex::new(
            r"^\s*(?:pub(?:\([a-z]+\))?\s+)?(?:async\s+)?(?:func|def|function|fn|class|type|struct|interface|impl)\b",
        )
        .expect("static regex")
    });
    let top = line.saturating_sub(400).max(1);
    for n in (top..=line.min(lines.len())).rev() {
        let l = &lines[n - 1];
        if def.is_match(l) {
            let named = l.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|w| w == name);
            // The nearest definition above decides; a nested one at deeper indentation
            // (a closure) does not end the search.
            if named {
                return Some(n);
            }
            if !l.starts_with(char::is_whitespace) {
                return None;
            }
        }
    }
    None
}

/// True when the statement holding line `from` is still open (an unclosed `(`, `[` or
/// `{`) on every line up to `to` (exclusive): `to` continues the statement that `from`
/// starts, as the closing line of a multi-line call continues its first line.
fn same_statement(lines: &[String], from: usize, to: usize) -> bool {
    if from == 0 || to <= from || to > lines.len() + 1 {
        return false;
    }
    let mut depth: i64 = 0;
    for l in &lines[from - 1..to - 1] {
        for c in l.chars() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                _ => {}
            }
        }
        if depth <= 0 {
            return false;
        }
    }
    true
}

/// Where the quote is in the file: every starting line of a window as wide as the
/// cited range that matches.
fn find_all(lines: &[String], width: usize, parts: &[String]) -> Vec<usize> {
    (1..=lines.len()).filter(|a| matches_at(lines, *a, a + width - 1, parts)).collect()
}

enum ContentOutcome {
    Verified(String),
    /// Wrong as written: the message.
    False(String),
}

fn judge(t: &FileText, r: &FileLineRef, q: &Quote) -> ContentOutcome {
    let parts = pieces(&q.text);
    let width = r.end - r.start + 1;
    let mut ranges = vec![(r.start, r.end)];
    ranges.extend(r.more.iter().map(|m| (*m, *m)));
    if ranges.iter().any(|(a, b)| matches_at(&t.lines, *a, *b, &parts)) {
        return ContentOutcome::Verified(format!("`{}` is at {}:{}", q.text, t.path, r.start));
    }
    if let Some(name) = identifier(&q.text) {
        if let Some(d) = enclosing_definition(&t.lines, r.start, name) {
            return ContentOutcome::Verified(format!("line {} is inside `{name}` (defined at line {d})", r.start));
        }
    }
    let hits = find_all(&t.lines, width.min(20), &parts);
    // The cited line continues a multi-line statement that the quote starts, or starts
    // one the quote continues (within a dozen lines).
    for h in &hits {
        let (from, to) = if *h < r.start { (*h, r.start) } else { (r.end, *h) };
        if to - from <= 12 && same_statement(&t.lines, from, to) {
            return ContentOutcome::Verified(format!(
                "`{}` is at line {h}, in the statement that spans {}:{}-{}",
                q.text,
                t.path,
                from.min(to),
                from.max(to)
            ));
        }
    }
    let actual = t.lines.get(r.start - 1).map(|l| l.trim().chars().take(100).collect::<String>()).unwrap_or_default();
    match hits.iter().min_by_key(|h| ((**h as i64 - r.start as i64).abs(), **h)) {
        Some(h) => {
            let off = *h as i64 - r.start as i64;
            let more = if hits.len() > 1 { format!(" ({} places in the file)", hits.len()) } else { String::new() };
            ContentOutcome::False(format!(
                "`{}` is not at {}:{} but at line {h} ({off:+}){more}; line {} reads `{actual}`",
                q.text, t.path, r.start, r.start
            ))
        }
        None => ContentOutcome::False(format!(
            "{}:{} reads `{actual}`; `{}` is nowhere in the file",
            t.path, r.start, q.text
        )),
    }
}

/// The evidence and verdict of one quote, with drift since the commit the citation
/// names, or since the last commit before the report's date (`dated`).
fn content_claim(
    code: &dyn CodeResolver,
    r: &FileLineRef,
    now: &FileText,
    q: &Quote,
    dated: Option<&str>,
) -> (Verdict, String, bool, Vec<Evidence>) {
    let ev_now = now.evidence(r.start, r.end);
    // Without a commit in the citation, a quote that is on the line now is right now,
    // whenever the report was written.
    if r.commit.is_none() {
        if let ContentOutcome::Verified(d) = judge(now, r, q) {
            return (Verdict::Verified, d, false, vec![ev_now]);
        }
    }
    let pinned: Option<(String, String)> = match (&r.commit, dated) {
        (Some(sha), _) => Some((sha.clone(), format!("at {sha}"))),
        (None, Some(rev)) => Some((rev.to_string(), format!("on the report's date ({})", &rev[..rev.len().min(12)]))),
        _ => None,
    };
    if let Some((sha, when)) = pinned {
        if let FileAnswer::Found(then) = code.read_file(r.repo.as_deref(), &r.path, Some(&sha)) {
            match judge(&then, r, q) {
                ContentOutcome::Verified(_) => {
                    let ev_then = then.evidence(r.start, r.end);
                    return match judge(now, r, q) {
                        ContentOutcome::Verified(d) => (Verdict::Verified, d, false, vec![ev_then, ev_now]),
                        ContentOutcome::False(d) => (
                            Verdict::False,
                            format!("right {when}, but the file has changed since: {d}"),
                            true,
                            vec![ev_then, ev_now],
                        ),
                    };
                }
                ContentOutcome::False(d) => {
                    let now_note = match judge(now, r, q) {
                        ContentOutcome::Verified(_) => " (it is there now)".to_string(),
                        ContentOutcome::False(_) => String::new(),
                    };
                    return (
                        Verdict::False,
                        format!("{when}: {d}{now_note}"),
                        false,
                        vec![then.evidence(r.start, r.end), ev_now],
                    );
                }
            }
        }
    }
    match judge(now, r, q) {
        ContentOutcome::Verified(d) => (Verdict::Verified, d, false, vec![ev_now]),
        ContentOutcome::False(d) => {
            // An undated citation that names no commit: if an earlier version of the file
            // had the quote on that line, the line moved since; it was not made up.
            for sha in code.file_history(r.repo.as_deref(), &r.path, 20).iter().skip(1) {
                if let FileAnswer::Found(then) = code.read_file(r.repo.as_deref(), &r.path, Some(sha)) {
                    if let ContentOutcome::Verified(_) = judge(&then, r, q) {
                        let short = &sha[..sha.len().min(12)];
                        return (
                            Verdict::False,
                            format!("right at {short} ({}), but the file has changed since: {d}", then.as_of),
                            true,
                            vec![then.evidence(r.start, r.end), ev_now],
                        );
                    }
                }
            }
            (Verdict::False, d, false, vec![ev_now])
        }
    }
}

fn join(v: &[usize]) -> String {
    v.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(", ")
}

/// Short repository names that are also common words (`kind cluster`, `release
/// branch`): their mention does not name the repository.
const WORD_ALIASES: &[&str] = &["kind", "release", "community", "website", "kubectl", "kubernetes", "k8s"];

/// Repositories a line names: short names the alias table knows (`kops`, `(CAAPH)`,
/// `CAPA#5990`) and `owner/repo` references. Paths are single tokens, so the
/// `k8s.io` of `staging/src/k8s.io/...` names nothing.
fn repos_named(line: &str, ctx: &RefContext) -> Vec<RepoRef> {
    let mut out: Vec<RepoRef> = Vec::new();
    for tok in line.split(|c: char| c.is_whitespace() || "()[]{},;:`*\"'|<>!?".contains(c)) {
        let tok = tok.trim_matches(|c: char| c == '.' || c == '-' || c == '_');
        let name = tok.split('#').next().unwrap_or("").to_ascii_lowercase();
        if name.is_empty() || WORD_ALIASES.contains(&name.as_str()) {
            continue;
        }
        let repo = ctx.aliases.get(&name).cloned().or_else(|| {
            // `owner/repo#N` only: a bare `a/b` is more often a path.
            tok.contains('#').then(|| RepoRef::parse(&name)).flatten()
        });
        if let Some(r) = repo {
            if !out.contains(&r) {
                out.push(r);
            }
        }
    }
    out
}

pub(crate) fn check_file_lines(
    cx: &mut Ctx<'_>,
    claims: &[FileLineRef],
    code: &dyn CodeResolver,
    stats: &mut Stats,
    day: Option<Day>,
    refs_ctx: &RefContext,
) {
    // What a report dated D could have read: the last commit of D (UTC).
    let until = day.map(|d| d.end_seconds());
    type Key = (Option<String>, String, usize, usize, Vec<usize>, Option<String>);
    let mut groups: BTreeMap<Key, Vec<&FileLineRef>> = BTreeMap::new();
    for c in claims {
        groups
            .entry((c.repo.clone(), c.path.clone(), c.start, c.end, c.more.clone(), c.commit.clone()))
            .or_default()
            .push(c);
    }
    stats.file_lines_distinct = groups.len();
    let mut past = PastTally::default();
    let markdown = cx.report.format == ReportFormat::Markdown;
    let spans_on: BTreeMap<usize, Vec<(usize, usize)>> = claims.iter().fold(BTreeMap::new(), |mut m, c| {
        m.entry(c.line).or_insert_with(Vec::new).push(c.span);
        m
    });
    for ((repo, path, start, end, more, commit), uses) in groups {
        let lines: Vec<usize> = uses.iter().map(|u| u.line).collect();
        let range = if end > start { format!("{start}-{end}") } else { start.to_string() };
        let shown = match &repo {
            Some(r) => format!("{r}:{path}:{range}"),
            None => format!("{path}:{range}"),
        };
        let mut answers = vec![code.check(repo.as_deref(), &path, start, end)];
        for m in &more {
            answers.push(code.check(repo.as_deref(), &path, *m, *m));
        }
        // A path given without its repository, missing from the checkout whose directory
        // it matches, while the line names another repository that has no checkout: the
        // path may well be that repository's (`test/e2e/x.go` of CAAPH, not k/k).
        if repo.is_none() && answers.iter().any(|a| matches!(a, CodeAnswer::Missing { .. })) {
            let elsewhere: Vec<String> = lines
                .iter()
                .flat_map(|n| repos_named(cx.report.line(*n), refs_ctx))
                .map(|r| r.to_string())
                .filter(|r| matches!(code.check(Some(r), &path, start, start), CodeAnswer::Unchecked { .. }))
                .collect();
            if let Some(other) = elsewhere.first() {
                let why = format!("{path} is in no named checkout, and the line names {other}, which has no checkout");
                answers = vec![CodeAnswer::Unchecked { why }];
            }
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
        // Claims about the past (`the skip that sat at a.go:41 until X`) resolve in the file
        // as it was then, whatever its length now.
        let whens: Vec<When> = uses.iter().map(|u| when_of(cx.report, u, markdown)).collect();
        let existed = if !missing.is_empty() && whens.iter().all(|w| matches!(w, When::Before { .. })) {
            whens.iter().find_map(|w| existed_before(code, repo.as_deref(), &path, start.max(end), w))
        } else {
            None
        };
        let (verdict, detail) = if let Some(then) = existed {
            stats.file_lines_resolved += 1;
            (Verdict::Verified, format!("{then}; now: {}", missing.join("; ")))
        } else if !missing.is_empty() {
            let also =
                if lines.len() > 1 { format!(" (also cited on lines {})", join(&lines[1..])) } else { String::new() };
            cx.flag(
                lines[0],
                "file-line",
                format!("{shown} does not resolve: {}{also}", missing.join("; ")),
                evidence.clone(),
            );
            (Verdict::False, missing.join("; "))
        } else if let Some(why) = unchecked {
            cx.skip(lines[0], "file-line", shown.clone(), why.clone(), lines[1..].to_vec());
            (Verdict::Unchecked, why)
        } else {
            stats.file_lines_resolved += 1;
            (Verdict::Verified, "the line exists".to_string())
        };
        cx.claims.push(ClaimRecord {
            line: lines[0],
            kind: "file-line".into(),
            subject: shown.clone(),
            claim: "exists".into(),
            words: String::new(),
            verdict,
            detail,
            evidence,
        });
        if verdict != Verdict::Verified {
            continue;
        }
        // What the report says is there.
        let mut file: Option<Option<Box<FileText>>> = None;
        let mut dated: Option<Option<String>> = None;
        for (u, when) in uses.iter().zip(&whens) {
            if cx.report.fenced.contains(&u.line) {
                continue;
            }
            let line_text = cx.report.line(u.line);
            let others = spans_on.get(&u.line).cloned().unwrap_or_default();
            let plural = u.end > u.start || !u.more.is_empty();
            if let When::Before { commit: Some(sha), changed_by: true } = when {
                past.changes += 1;
                check_changed_by(cx, code, u, sha);
            }
            for q in attached_quotes(line_text, u.span, &others, markdown, plural) {
                let f = file.get_or_insert_with(|| match code.read_file(repo.as_deref(), &path, None) {
                    FileAnswer::Found(t) => Some(t),
                    _ => None,
                });
                let Some(now) = f.as_deref() else { continue };
                let dated =
                    dated.get_or_insert_with(|| until.and_then(|t| code.revision_at(repo.as_deref(), &path, t)));
                let (verdict, detail, drift, evidence) = match when {
                    When::Before { .. } => {
                        let (v, d, ev, moved) = past_content_claim(code, u, now, &q, when);
                        past.quotes += 1;
                        past.moved += usize::from(moved);
                        if v == Verdict::Unchecked {
                            cx.skip(u.line, "file-line", format!("`{}` at {}", q.text, u.raw), d.clone(), Vec::new());
                        }
                        (v, d, false, ev)
                    }
                    When::Now => content_claim(code, u, now, &q, dated.as_deref()),
                };
                if verdict == Verdict::False {
                    let id = if drift { "file-drift" } else { "file-content" };
                    cx.flag(u.line, id, format!("{}: {detail}", u.raw), evidence.clone());
                }
                cx.claims.push(ClaimRecord {
                    line: u.line,
                    kind: "file-content".into(),
                    subject: u.raw.clone(),
                    claim: format!("shows `{}`", q.text),
                    words: q.text.clone(),
                    verdict,
                    detail,
                    evidence,
                });
            }
        }
        let _ = commit;
    }
    if past.quotes + past.changes > 0 {
        cx.notes.insert(
            "file-content",
            format!(
                "{} quote(s) about the past checked before the change the sentence names, {} change(s) checked against their commit; {} moved since (a note, not a finding)",
                past.quotes, past.changes, past.moved
            ),
        );
    }
}

/// Claims about the past a report makes, counted for the rule's note.
#[derive(Default)]
struct PastTally {
    quotes: usize,
    changes: usize,
    moved: usize,
}

/// When the sentence puts a citation (a citation that names its own commit is at it).
fn when_of(report: &Report, u: &FileLineRef, markdown: bool) -> When {
    if u.commit.is_some() || report.fenced.contains(&u.line) {
        return When::Now;
    }
    let line = report.line(u.line);
    crate::tense::when_cited(line, clause_range(line, u.span.0), u.span, markdown)
}

/// The versions of a file a claim about the past describes, each with how it is named:
/// the parent of the commit the sentence names, else the file's earlier versions,
/// newest first. `complete`: every version the file had is listed.
fn past_versions(
    code: &dyn CodeResolver,
    repo: Option<&str>,
    path: &str,
    when: &When,
) -> (Vec<(String, String)>, bool) {
    const MAX: usize = 50;
    if let When::Before { commit: Some(sha), .. } = when {
        if let Some(parent) = code.parent_commit(repo, path, sha) {
            let label = format!("before {sha} (at its parent {})", &parent[..parent.len().min(12)]);
            return (vec![(parent, label)], true);
        }
    }
    let history = code.file_history(repo, path, MAX);
    let complete = history.len() < MAX;
    let versions = history.into_iter().map(|sha| {
        let label = format!("at {}", &sha[..sha.len().min(12)]);
        (sha, label)
    });
    (versions.collect(), complete)
}

/// Whether the lines a past claim cites existed then: how, or `None`.
fn existed_before(code: &dyn CodeResolver, repo: Option<&str>, path: &str, last: usize, when: &When) -> Option<String> {
    let (versions, _) = past_versions(code, repo, path, when);
    versions.into_iter().find_map(|(sha, label)| match code.read_file(repo, path, Some(&sha)) {
        FileAnswer::Found(t) if t.lines.len() >= last => Some(format!("line {last} existed {label}")),
        _ => None,
    })
}

/// Where a quote verified in the past is now: still there, moved (a note), or gone.
fn since_then(now: &FileText, r: &FileLineRef, q: &Quote) -> (String, bool) {
    if let ContentOutcome::Verified(_) = judge(now, r, q) {
        return ("; still there".into(), false);
    }
    let hits = find_all(&now.lines, (r.end - r.start + 1).min(20), &pieces(&q.text));
    match hits.iter().min_by_key(|h| ((**h as i64 - r.start as i64).abs(), **h)) {
        Some(h) => (format!("; moved since: now at {}:{h} (a note, not a finding)", now.path), true),
        None => ("; gone since".into(), false),
    }
}

/// A quote the sentence puts before a change (`the skip that sat at a.go:41 until X`):
/// judged in the file as it was then. Returns the verdict, detail, evidence and whether
/// it moved since.
fn past_content_claim(
    code: &dyn CodeResolver,
    r: &FileLineRef,
    now: &FileText,
    q: &Quote,
    when: &When,
) -> (Verdict, String, Vec<Evidence>, bool) {
    let repo = r.repo.as_deref();
    let (versions, complete) = past_versions(code, repo, &r.path, when);
    let named = matches!(when, When::Before { commit: Some(_), .. }) && versions.len() == 1;
    let mut read = 0;
    for (sha, label) in &versions {
        let FileAnswer::Found(then) = code.read_file(repo, &r.path, Some(sha)) else { continue };
        read += 1;
        match judge(&then, r, q) {
            ContentOutcome::Verified(d) => {
                let (since, moved) = since_then(now, r, q);
                let ev = vec![then.evidence(r.start, r.end), now.evidence(r.start, r.end)];
                return (Verdict::Verified, format!("{label}: {d}{since}"), ev, moved);
            }
            ContentOutcome::False(d) if named => {
                return (Verdict::False, format!("{label}: {d}"), vec![then.evidence(r.start, r.end)], false);
            }
            ContentOutcome::False(_) => {}
        }
    }
    if read > 0 && complete {
        let d = format!("no earlier version of {} ({read} read) has `{}` at line {}", r.path, q.text, r.start);
        return (Verdict::False, d, vec![now.evidence(r.start, r.end)], false);
    }
    let why = if read == 0 {
        format!("the sentence puts `{}` before a change, and no earlier version of {} could be read", q.text, r.path)
    } else {
        format!(
            "`{}` is not at {}:{} in the {read} latest versions of the file; older ones were not read",
            q.text, r.path, r.start
        )
    };
    (Verdict::Unchecked, why, Vec::new(), false)
}

/// A change the report says a commit made at `path:line` (`X removed the skip that sat
/// at a.go:41`): the commit must have changed those lines. The lines a commit changed
/// lie between the longest common head and tail of the file before and after it; the
/// claim is flagged only when the cited range misses that region on both sides (the
/// cited numbers may be either side's).
fn check_changed_by(cx: &mut Ctx<'_>, code: &dyn CodeResolver, u: &FileLineRef, sha: &str) {
    let repo = u.repo.as_deref();
    let Some(parent) = code.parent_commit(repo, &u.path, sha) else { return };
    let (FileAnswer::Found(before), FileAnswer::Found(after)) =
        (code.read_file(repo, &u.path, Some(&parent)), code.read_file(repo, &u.path, Some(sha)))
    else {
        return;
    };
    let (old, new) = (&before.lines, &after.lines);
    if u.end > old.len() {
        // Lines the file did not have then: the existence check speaks for them.
        return;
    }
    let head = old.iter().zip(new.iter()).take_while(|(a, b)| a == b).count();
    let tail =
        old.iter().rev().zip(new.iter().rev()).take_while(|(a, b)| a == b).count().min(old.len().min(new.len()) - head);
    let hits = |len: usize| u.start <= len - tail && u.end > head;
    let changed = hits(old.len()) || hits(new.len());
    let (verdict, detail) = if changed {
        (Verdict::Verified, format!("{sha} changed {}:{}-{}", u.path, u.start, u.end))
    } else {
        let d = format!(
            "{sha} did not change {}:{}: the line reads `{}` before and after it",
            u.path,
            u.start,
            old[u.start - 1].trim().chars().take(80).collect::<String>()
        );
        cx.flag(u.line, "file-content", format!("{}: {d}", u.raw), vec![before.evidence(u.start, u.end)]);
        (Verdict::False, d)
    };
    cx.claims.push(ClaimRecord {
        line: u.line,
        kind: "file-change".into(),
        subject: u.raw.clone(),
        claim: format!("changed by {sha}"),
        words: sha.to_string(),
        verdict,
        detail,
        evidence: vec![before.evidence(u.start, u.end.min(old.len())), after.evidence(u.start, u.end.min(new.len()))],
    });
}

// ---- commits ----------------------------------------------------------------------------

/// A commit SHA cited in the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommitRef {
    pub line: usize,
    pub sha: String,
    pub repo: Option<RepoRef>,
    /// Words around it say it is a commit (`commit`, `cherry-pick`, `introduced`, a
    /// repository name, a commit URL): only then can "not found" be a finding.
    pub context: bool,
}

const COMMIT_WORDS: &[&str] = &[
    "commit",
    "commits",
    "sha",
    "cherry-pick",
    "cherry-picked",
    "revert",
    "reverted",
    "reverts",
    "introduced",
    "introducing",
    "regression",
    "landed",
    "pushed",
    "direct-pushed",
    "authored",
    "bisect",
    "bisected",
    "culprit",
    "git",
    "change",
    "removed",
    "added",
    "broke",
    "by",
];

fn commit_url_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"https?://github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)/commit/([0-9a-f]{7,40})")
            .expect("static regex")
    })
}

fn hex_token_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(r"[0-9a-f]{7,40}").expect("static regex"))
}

/// Every commit SHA of the report: commit URLs, `repo@sha`, and stand-alone hex tokens
/// with digits and letters.
pub(crate) fn extract_commits(report: &Report, ctx: &RefContext) -> Vec<CommitRef> {
    let mut out = Vec::new();
    for (i, line) in report.lines.iter().enumerate() {
        if report.fenced.contains(&(i + 1)) {
            continue;
        }
        let urls = crate::builds::url_spans(line);
        for c in commit_url_re().captures_iter(line) {
            out.push(CommitRef {
                line: i + 1,
                sha: c[3].to_string(),
                repo: Some(RepoRef::new(&c[1], &c[2])),
                context: true,
            });
        }
        let lower = line.to_ascii_lowercase();
        for m in hex_token_re().find_iter(line) {
            let (a, b) = (m.start(), m.end());
            if urls.iter().any(|(ua, ub, _)| a >= *ua && a < *ub) {
                continue;
            }
            let prev = line[..a].chars().next_back();
            let next = line[b..].chars().next();
            let before_ok = prev.is_none_or(|c| {
                !(c.is_alphanumeric() || matches!(c, '_' | '-' | '/' | '.' | ':' | '#' | '@' | '=' | '$'))
            });
            let at_form = prev == Some('@');
            let after_ok = next.is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '/' | '.' | ':')))
                || (next == Some('.') && line[b + 1..].chars().next().is_none_or(|c| c.is_whitespace()));
            if !(before_ok || at_form) || !after_ok {
                continue;
            }
            let t = m.as_str();
            if !t.bytes().any(|x| x.is_ascii_digit()) || !t.bytes().any(|x| x.is_ascii_alphabetic()) {
                continue;
            }
            // `repo@sha` or a repository name just before.
            let head = &line[..a];
            let mut repo: Option<RepoRef> = None;
            if at_form {
                let name: String = head[..head.len() - 1]
                    .chars()
                    .rev()
                    .take_while(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                repo = ctx.aliases.get(&name.to_ascii_lowercase()).cloned().or_else(|| RepoRef::parse(&name));
            }
            let words: Vec<String> = lower[..a]
                .split(|c: char| c.is_whitespace() || matches!(c, '(' | ',' | ':' | '"'))
                .filter(|w| !w.is_empty())
                .rev()
                .take(4)
                .map(str::to_string)
                .collect();
            if repo.is_none() {
                repo = words.iter().take(3).find_map(|w| {
                    let w = w.trim_matches(|c: char| !(c.is_alphanumeric() || matches!(c, '/' | '-' | '.')));
                    ctx.aliases.get(w).cloned().or_else(|| RepoRef::parse(w))
                });
            }
            // `<sha> in k/k`, `<sha> of kubernetes/kops`.
            if repo.is_none() {
                let tail: Vec<&str> = lower[b..].split_whitespace().take(2).collect();
                if let [prep, name] = tail.as_slice() {
                    if *prep == "in" || *prep == "of" || *prep == "from" {
                        let name = name.trim_matches(|c: char| !(c.is_alphanumeric() || matches!(c, '/' | '-' | '.')));
                        // Only names the alias table knows: `in pkg/kubelet` is a path.
                        repo =
                            ctx.aliases.get(name).cloned().or_else(|| {
                                RepoRef::parse(name).filter(|r| ctx.aliases.values().any(|known| known == r))
                            });
                    }
                }
            }
            let after: Vec<String> = lower[b..]
                .split(|c: char| c.is_whitespace() || matches!(c, ')' | ',' | ':' | '"' | '('))
                .filter(|w| !w.is_empty())
                .take(3)
                .map(str::to_string)
                .collect();
            let clean = |w: &String| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-').to_string();
            // Content hashes and digests are not commits.
            if words.iter().take(2).any(|w| {
                let w = clean(w);
                w.starts_with("sha256")
                    || w.starts_with("sha1")
                    || ["md5", "digest", "checksum", "etag", "hash"].contains(&w.as_str())
            }) {
                continue;
            }
            let context = at_form
                || repo.is_some()
                || words.iter().chain(after.iter()).any(|w| COMMIT_WORDS.contains(&clean(w).as_str()));
            // Without words saying it is a commit, a hex token is not a claim.
            if !context {
                continue;
            }
            out.push(CommitRef { line: i + 1, sha: t.to_string(), repo, context });
        }
    }
    out
}

/// Looks up every distinct cited commit.
pub(crate) fn check_commits(
    cx: &mut Ctx<'_>,
    commits: &[CommitRef],
    code: &dyn CodeResolver,
    refs: &dyn RefResolver,
    default_repo: Option<&RepoRef>,
    report_day: Option<Day>,
) {
    let mut groups: BTreeMap<(String, Option<RepoRef>), Vec<&CommitRef>> = BTreeMap::new();
    for c in commits {
        groups.entry((c.sha.clone(), c.repo.clone())).or_default().push(c);
    }
    for ((sha, repo), uses) in groups {
        let lines: Vec<usize> = uses.iter().map(|u| u.line).collect();
        let context = uses.iter().any(|u| u.context);
        let repo = repo.or_else(|| default_repo.cloned());
        let repo_name = repo.as_ref().map(|r| r.to_string());
        let shown = match &repo_name {
            Some(r) => format!("{r}@{sha}"),
            None => sha.clone(),
        };
        // A checkout of the repository (or any checkout when none is named).
        let local = code.find_commit(repo_name.as_deref(), &sha);
        let local = match (&local, &repo_name) {
            (CommitAnswer::Unchecked { .. }, Some(r)) => {
                // Checkouts are named by their short name too.
                match r.split_once('/').map(|(_, n)| code.find_commit(Some(n), &sha)) {
                    Some(a @ (CommitAnswer::Found(_) | CommitAnswer::Missing { .. })) => a,
                    _ => local,
                }
            }
            _ => local,
        };
        let (verdict, detail, evidence): (Verdict, String, Vec<Evidence>) = match local {
            CommitAnswer::Found(c) => (
                Verdict::Verified,
                format!("{} in {}: {} ({})", &c.sha[..12.min(c.sha.len())], c.checkout, c.subject, c.day),
                vec![c.evidence.clone()],
            ),
            local => {
                let remote = repo.as_ref().and_then(|r| refs.commit_info(r, &sha));
                match remote {
                    Some(Ok(Some(ci))) => {
                        let ev = Evidence::new(
                            EvidenceKind::GitCommit,
                            format!("github:/repos/{}/commits/{}", ci.repo, ci.sha),
                            format!("{} {} ({}, {})", &ci.sha[..12.min(ci.sha.len())], ci.subject, ci.author, ci.date),
                            citriage_model::evidence::sha256_hex(ci.sha.as_bytes()),
                            ci.date.get(0..10).unwrap_or("").to_string(),
                        );
                        (Verdict::Verified, format!("{}: {}", ci.sha, ci.subject), vec![ev])
                    }
                    Some(Ok(None)) => (
                        Verdict::False,
                        format!("GitHub has no commit {sha} in {}", repo_name.clone().unwrap_or_default()),
                        Vec::new(),
                    ),
                    other => {
                        let remote_why = match other {
                            Some(Err(w)) => format!("; GitHub: {w}"),
                            _ => String::new(),
                        };
                        match local {
                            CommitAnswer::Missing { why, head_day } => {
                                // A full clone newer than the report has every commit the
                                // report could cite.
                                let newer = match (report_day, Day::parse(&head_day)) {
                                    (Some(r), Some(h)) => h >= r,
                                    (None, Some(_)) => true,
                                    _ => false,
                                };
                                if newer {
                                    (Verdict::False, why, Vec::new())
                                } else {
                                    (
                                        Verdict::Unchecked,
                                        format!("{why}, older than the report{remote_why}"),
                                        Vec::new(),
                                    )
                                }
                            }
                            CommitAnswer::Unchecked { why } => (
                                Verdict::Unchecked,
                                if repo.is_none() {
                                    format!("its repository is not named; {why}")
                                } else {
                                    format!("{why}{remote_why}")
                                },
                                Vec::new(),
                            ),
                            CommitAnswer::Found(_) => unreachable!("handled above"),
                        }
                    }
                }
            }
        };
        let verdict = if verdict == Verdict::False && !context { Verdict::Unchecked } else { verdict };
        match verdict {
            Verdict::False => {
                let also = if lines.len() > 1 {
                    format!(" (also cited on lines {})", join(&lines[1..]))
                } else {
                    String::new()
                };
                cx.flag(lines[0], "commit", format!("commit {shown} does not exist: {detail}{also}"), evidence.clone());
            }
            Verdict::Unchecked => cx.skip(lines[0], "commit", shown.clone(), detail.clone(), lines[1..].to_vec()),
            Verdict::Verified => {}
        }
        cx.claims.push(ClaimRecord {
            line: lines[0],
            kind: "commit".into(),
            subject: shown,
            claim: "exists".into(),
            words: sha.clone(),
            verdict,
            detail,
            evidence,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::parse;

    #[test]
    fn file_line_claims() {
        let r = parse("see pkg/a/b.go:12, kubernetes-sigs/x:hack/c.sh:3-5 and t.go:3306,3458 or https://h.io/a.go:9 v1.2.3:4 127.0.0.1:2380 k8s@abc1234:d/e.go:7 https://github.com/o/r/blob/0123abc4/f/g.go#L3-L4\n");
        type Got = (Option<String>, String, usize, usize, Vec<usize>, Option<String>);
        let mut got: Vec<Got> =
            extract_file_lines(&r).into_iter().map(|f| (f.repo, f.path, f.start, f.end, f.more, f.commit)).collect();
        got.sort();
        let mut want: Vec<Got> = vec![
            (None, "pkg/a/b.go".into(), 12, 12, vec![], None),
            (Some("kubernetes-sigs/x".into()), "hack/c.sh".into(), 3, 5, vec![], None),
            (None, "t.go".into(), 3306, 3306, vec![3458], None),
            (Some("k8s".into()), "d/e.go".into(), 7, 7, vec![], Some("abc1234".into())),
            (Some("o/r".into()), "f/g.go".into(), 3, 4, vec![], Some("0123abc4".into())),
        ];
        want.sort();
        assert_eq!(got, want);
    }

    fn quotes(line: &str, cite: &str) -> Vec<String> {
        let a = line.find(cite).unwrap();
        attached_quotes(line, (a, a + cite.len()), &[], true, false).into_iter().map(|q| q.text).collect()
    }

    #[test]
    fn quotes_attach_to_their_citation() {
        assert_eq!(quotes("`WaitForX()` at pkg/a.go:12 polls", "pkg/a.go:12"), vec!["WaitForX()"]);
        assert_eq!(quotes("pkg/a.go:12 (`timeout := 10`) is short", "pkg/a.go:12"), vec!["timeout := 10"]);
        assert_eq!(
            quotes("At pkg/a.go:12 change `10*time.Second` → `30*time.Second`", "pkg/a.go:12"),
            vec!["10*time.Second"]
        );
        assert_eq!(quotes("change `10s` to `30s` at pkg/a.go:12", "pkg/a.go:12"), vec!["10s"]);
        assert_eq!(
            quotes("the retry loop in pkg/a.go:12 and the `x` flag elsewhere", "pkg/a.go:12"),
            Vec::<String>::new()
        );
        assert_eq!(quotes("pkg/a.go:12 says \"unknown flag\"", "pkg/a.go:12"), vec!["unknown flag"]);
        assert_eq!(quotes("`pkg/a.go:12` polls for 10s", "pkg/a.go:12"), Vec::<String>::new());
        // Each quote goes to the citation it sits closest to.
        let line = "`Start` (a/b.go:41), the options (a/b.go:42), `run` (a/b.go:69).";
        let spans: Vec<(usize, usize)> = ["a/b.go:41", "a/b.go:42", "a/b.go:69"]
            .iter()
            .map(|c| (line.find(c).unwrap(), line.find(c).unwrap() + c.len()))
            .collect();
        let got: Vec<Vec<String>> = spans
            .iter()
            .map(|s| attached_quotes(line, *s, &spans, true, false).into_iter().map(|q| q.text).collect())
            .collect();
        assert_eq!(got, vec![vec!["Start".to_string()], vec![], vec!["run".to_string()]]);
    }

    #[test]
    fn quotes_attach_to_citations_written_as_code_and_to_their_verbs() {
        // The citation in backticks, the quote after any present-tense verb.
        assert_eq!(
            quotes("`pkg/a.go:12` polls with `30*time.Second`, too short", "pkg/a.go:12"),
            vec!["30*time.Second"]
        );
        assert_eq!(quotes("`pkg/a.go:12` now reads `- name: X`.", "pkg/a.go:12"), vec!["- name: X"]);
        assert_eq!(
            quotes("the test waits `10 * time.Second` at `pkg/a.go:12`.", "pkg/a.go:12"),
            vec!["10 * time.Second"]
        );
        // A quoted phrase of plain words after a verb outside the list is a term.
        assert_eq!(
            quotes("the formula at pkg/a.go:12 counts \"always failing\" as consistent", "pkg/a.go:12"),
            Vec::<String>::new()
        );
        assert_eq!(quotes("pkg/a.go:12 polls with \"30*time.Second\"", "pkg/a.go:12"), vec!["30*time.Second"]);
        // The new side of a sketch, and a quote about something else in the clause.
        assert_eq!(quotes("replace `10s` with `30s` at `pkg/a.go:12`", "pkg/a.go:12"), vec!["10s"]);
        assert_eq!(
            quotes("harden the fallback at `pkg/a.go:12` (use `Get-Volume`)", "pkg/a.go:12"),
            Vec::<String>::new()
        );
        assert_eq!(
            quotes("`pkg/a.go:12` has 9 names, and the build waits for `could not allocate`", "pkg/a.go:12"),
            Vec::<String>::new()
        );
        // Base-form verbs only for several lines (`:3306,3458 call X`), not imperatives.
        let line = "`pkg/a.go:3306,3458` call `require.NoError(t, err)`";
        let a = line.find("pkg/a.go:3306,3458").unwrap();
        let got: Vec<String> = attached_quotes(line, (a, a + "pkg/a.go:3306,3458".len()), &[], true, true)
            .into_iter()
            .map(|q| q.text)
            .collect();
        assert_eq!(got, vec!["require.NoError(t, err)"]);
        assert_eq!(quotes("`pkg/a.go:12` use `t.TempDir()`", "pkg/a.go:12"), Vec::<String>::new());
    }

    #[test]
    fn a_quote_may_start_the_multi_line_statement_the_cited_line_ends() {
        let lines: Vec<String> = [
            "func f() {",
            "\tgomega.Eventually(ctx, func(g gomega.Gomega) {",
            "\t\tcheck(g)",
            "\t}, time.Minute, 15*time.Second).Should(gomega.Succeed())",
            "\tother()",
            "}",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert!(same_statement(&lines, 2, 4));
        assert!(!same_statement(&lines, 4, 5));
        let t = FileText {
            checkout: "c".into(),
            path: "a.go".into(),
            at: "c".into(),
            lines,
            sha256: String::new(),
            as_of: String::new(),
        };
        let cite = |n: usize| FileLineRef {
            line: 1,
            raw: format!("a.go:{n}"),
            repo: None,
            path: "a.go".into(),
            start: n,
            end: n,
            more: vec![],
            commit: None,
            span: (0, 0),
        };
        let q = |s: &str| Quote { text: s.into(), span: (0, 0) };
        assert!(matches!(judge(&t, &cite(4), &q("Eventually")), ContentOutcome::Verified(_)));
        assert!(matches!(judge(&t, &cite(2), &q("time.Minute")), ContentOutcome::Verified(_)));
        // `other()` is not part of the statement at line 2.
        assert!(matches!(judge(&t, &cite(2), &q("other()")), ContentOutcome::False(_)));
    }

    #[test]
    fn repositories_a_line_names() {
        let ctx = RefContext::kubernetes();
        let got: Vec<String> = repos_named(
            "evidence: `test/e2e/x.go:1` (CAAPH), kops#5, etcd-io/etcd#7, staging/src/k8s.io/a.go:3 in a kind cluster",
            &ctx,
        )
        .into_iter()
        .map(|r| r.to_string())
        .collect();
        assert_eq!(got, vec!["kubernetes-sigs/cluster-api-addon-provider-helm", "kubernetes/kops", "etcd-io/etcd"]);
    }

    #[test]
    fn matching() {
        let lines: Vec<String> =
            ["package a", "", "func Poll(t int) {", "\ttimeout := 10 * time.Second", "\treturn", "}"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        assert!(matches_at(&lines, 4, 4, &pieces("timeout := 10 * time.Second")));
        assert!(matches_at(&lines, 4, 4, &pieces("timeout := ... time.Second")));
        assert!(!matches_at(&lines, 5, 5, &pieces("timeout")));
        assert_eq!(enclosing_definition(&lines, 5, "Poll"), Some(3));
        assert_eq!(find_all(&lines, 1, &pieces("return")), vec![5]);
    }
}
