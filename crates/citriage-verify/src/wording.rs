//! Checks on the report's own words: unfinished text (`TODO`, `TBD`, any `{…}`
//! template slot outside code), hedges stated as facts in root-cause text and tier rows
//! (the runbook's Appendix D), and whether each pattern names its causal chain —
//! recognised by its parts (commit SHAs, PR references, `path:line` citations, a named
//! change with a date or version) rather than by keywords.

use crate::content::file_line_re;
use crate::outcome::Ctx;
use crate::report::{code_spans, without_code, Report, ReportFormat, Section, SectionKind};
use citriage_github::FoundRef;
use regex::Regex;
use std::collections::BTreeSet;
use std::sync::OnceLock;

fn re(cell: &'static OnceLock<Regex>, p: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(p).expect("static regex"))
}

// ---- placeholders ------------------------------------------------------------------------

/// The `{…}` groups of a line (outermost, on one line).
fn brace_groups(line: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in line.char_indices() {
        match c {
            '{' => {
                if depth == 0 {
                    start = i;
                }
                depth += 1;
            }
            '}' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    out.push((start, i + 1));
                }
            }
            _ => {}
        }
    }
    out
}

/// A `{…}` that is code or shell notation rather than a template slot: `${VAR}`,
/// `{{ .x }}`, `name-{a,b}` brace expansion, `{ x := 1 }`, JSON objects.
fn code_like_braces(line: &str, a: usize, b: usize) -> bool {
    let inner = &line[a + 1..b - 1];
    let before = line[..a].chars().next_back();
    let after = line[b..].chars().next();
    if matches!(before, Some('$' | '%' | '#' | '{' | '\\' | '&')) || inner.starts_with('{') {
        return true;
    }
    // Format strings (`{%Y-%m-%d}`) and printed values (`&{0xc000 0xc001}`).
    if inner.contains('%') || inner.split_whitespace().all(|w| w.starts_with("0x")) {
        return true;
    }
    let glued = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '/' | '.' | '@'));
    if inner.contains(',') && (glued(before) || glued(after)) {
        return true;
    }
    let t = inner.trim();
    if t.is_empty() {
        return true;
    }
    [":=", "==", "!=", "=>", ">=", "<=", "&&", "||", "return ", "\": ", "': ", "();", " = "]
        .iter()
        .any(|p| t.contains(p))
        || t.ends_with(';')
        || t.starts_with('"')
        || re(&CALL, r"[A-Za-z_][A-Za-z0-9_.]*\([^)]*\)").is_match(t)
            && (t.contains(';') || t.contains('=') || t.starts_with(char::is_lowercase))
}
static CALL: OnceLock<Regex> = OnceLock::new();

fn marker_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"\bTODO\b|\bTBD\b|\bFIXME\b|(?i:\blorem ipsum\b)|(?i:\bplaceholders?\b)")
}

const MENTION_BEFORE: &[&str] = &[
    "a",
    "an",
    "the",
    "this",
    "that",
    "its",
    "their",
    "his",
    "her",
    "by",
    "with",
    "of",
    "old",
    "original",
    "existing",
    "no",
    "any",
    "every",
    "without",
    "each",
    "removed",
    "remaining",
    "same",
    "another",
    "one",
    "left",
    "leaves",
    "added",
    "adds",
    "has",
    "had",
    "referencing",
    "quoted",
];
const MENTION_AFTER: &[&str] = &[
    "comment",
    "comments",
    "marker",
    "markers",
    "note",
    "notes",
    "referencing",
    "mentioning",
    "says",
    "reads",
    "left",
    "tag",
    "tags",
    "line",
    "lines",
    "in",
    "image",
    "images",
    "value",
    "values",
    "pod",
    "pods",
    "that",
    "which",
    "above",
    "below",
    "was",
    "were",
    "is",
    "remains",
    "text",
];

/// Whether the marker at `a..b` is a quotation of code or a mention of one
/// ("guarded by a TODO referencing #1", "`// TODO`", "with TODO // https://...").
fn mentioned(line: &str, a: usize, b: usize) -> bool {
    let word = &line[a..b];
    let before = line[..a].trim_end();
    let after = line[b..].trim_start();
    if crate::prose::quoted_ranges(line).iter().any(|(x, y)| a > *x && b < *y) {
        return true;
    }
    if ["//", "#", "/*", "--", "<!--", ";"].iter().any(|m| before.ends_with(m)) {
        return true;
    }
    if after.starts_with("//") || after.starts_with('(') && !after.starts_with("()") || after.starts_with("#") {
        // `TODO(alice):` is the code convention; `(TODO)` in prose is not.
        return !line[b..].starts_with(')');
    }
    let prev = before.rsplit(|c: char| c.is_whitespace() || c == '(').next().unwrap_or("").to_ascii_lowercase();
    let next = after
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '.' | ')' | ':'))
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let prev = prev.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'');
    if word.eq_ignore_ascii_case("placeholder") || word.eq_ignore_ascii_case("placeholders") {
        // The word is a placeholder only when it stands as one: alone, bracketed, in caps,
        // or "placeholder text".
        let bracketed = before.ends_with(['[', '<', '(']) && after.starts_with([']', '>', ')']);
        let alone = before.trim_start_matches(['|', '-', '*', ' ']).is_empty()
            && after.trim_start_matches(['|', '.', ' ']).is_empty();
        let caps = word == "PLACEHOLDER";
        let text = next == "text" || next == "here";
        return !(bracketed || alone || caps || text);
    }
    MENTION_BEFORE.contains(&prev) || prev.ends_with("'s") || MENTION_AFTER.contains(&next.as_str())
}

/// The unfinished-text markers of a line that are used as such, and how many are
/// mentions; a marker listed right after a mentioned one (`no TODO / TBD`) is a
/// mention too.
fn marker_hits(line: &str) -> (Vec<String>, usize) {
    let mut flagged = Vec::new();
    let mut mentions = 0;
    let mut last: Option<(usize, bool)> = None;
    for m in marker_re().find_iter(line) {
        let listed = last.is_some_and(|(end, was_mention)| {
            was_mention && {
                let gap = line[end..m.start()].trim();
                gap.is_empty()
                    || gap.chars().all(|c| matches!(c, '/' | ',' | '|' | '+' | '&'))
                    || ["or", "and", "nor", ", or", ", and"].contains(&gap)
            }
        });
        let is_mention = listed || mentioned(line, m.start(), m.end());
        if is_mention {
            mentions += 1;
        } else {
            flagged.push(m.as_str().to_string());
        }
        last = Some((m.end(), is_mention));
    }
    (flagged, mentions)
}

fn log_line_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"^\s*(?:[IWEF][0-9]{4} [0-9]{2}:[0-9]{2}|[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}|\$ |==> )")
}

pub(crate) fn check_placeholders(cx: &mut Ctx<'_>) {
    let markdown = cx.report.format == ReportFormat::Markdown;
    let mut hits: Vec<(usize, Vec<String>)> = Vec::new();
    let mut mentions = 0;
    for (i, l) in cx.report.lines.iter().enumerate() {
        let n = i + 1;
        if markdown && cx.report.fenced.contains(&n) {
            continue;
        }
        // Code spans are quoted code: masked. A rendered report has lost them; there,
        // indented lines and diff lines stand for its code blocks.
        let t = if markdown { without_code(l) } else { l.clone() };
        if !markdown
            && (l.starts_with("    ") && !l.trim_start().starts_with(['•', '-', '*'])
                || l.trim_start().starts_with("+ "))
        {
            continue;
        }
        // Pasted log lines and shell sessions are output, not the author's words.
        if log_line_re().is_match(l) {
            continue;
        }
        let mut words: BTreeSet<String> = BTreeSet::new();
        for (a, b) in brace_groups(&t) {
            if !code_like_braces(&t, a, b) {
                words.insert(t[a..b].chars().take(60).collect());
            }
        }
        let (flagged, mentioned_here) = marker_hits(&t);
        mentions += mentioned_here;
        words.extend(flagged);
        if !words.is_empty() {
            hits.push((n, words.into_iter().collect()));
        }
    }
    for (n, words) in hits {
        cx.flag(n, "placeholder", format!("unfinished text: {}", words.join(", ")), Vec::new());
    }
    let mut note = Vec::new();
    if mentions > 0 {
        note.push(format!("{mentions} TODO/placeholder word(s) quoted from code or mentioned, not counted"));
    }
    if !markdown {
        note.push("rendered text: code spans are lost; indented and diff lines are taken as code".into());
    }
    if !note.is_empty() {
        cx.notes.insert("placeholder", note.join("; "));
    }
}

// ---- hedges ------------------------------------------------------------------------------

fn hedge_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(
        &R,
        r"(?i)\b(presumably|probably|likely|unlikely|possibly|perhaps|maybe|apparently|seemingly|supposedly|seems? to|appears? to|might|i think|we think|i believe|we believe|i assume|we assume|should (?:clear|fix|resolve|help|work|pass|recover|stabili[sz]e|go away|unblock|land|drop|disappear|improve|be (?:fixed|resolved|green|enough|the|gone|safe|fine|ok))|(?:may|could|must) (?:be (?:the|a|due|caused|related|because)|have))\b",
    )
}

fn uncertain_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(
        &R,
        r"(?i)\b(unverified|not (?:yet )?verified|unconfirmed|not (?:yet )?confirmed|uncertain|uncertainty|unknown|hypothes[ie]s|hypothesi[sz]ed|suspect(?:ed)?|needs? confirmation|to be confirmed|tbc|see (?:the )?(?:still open|open questions|uncertainty)|still open|open question|not investigated|could not verify|couldn't verify|cannot verify|unclear|not determined|guess)\b|\(\?\)|\?",
    )
}

/// An evidence pointer: `path:line`, a URL, a build id, a commit SHA, a code span, a
/// quoted string, an evidence id, "verified"/"confirmed".
fn has_evidence(text: &str, has_ref: bool, markdown: bool) -> bool {
    static SHA: OnceLock<Regex> = OnceLock::new();
    static BUILD: OnceLock<Regex> = OnceLock::new();
    static QUOTE: OnceLock<Regex> = OnceLock::new();
    has_ref
        || file_line_re().is_match(text)
        || text.contains("http://")
        || text.contains("https://")
        || re(&BUILD, r"\b[0-9]{16,20}\b").is_match(text)
        || re(&SHA, r"\b[0-9a-f]*[0-9][0-9a-f]*[a-f][0-9a-f]*\b").find_iter(text).any(|m| m.as_str().len() >= 7)
        || (markdown && !code_spans(text).is_empty())
        || re(&QUOTE, r#""[^"]{8,}"|“[^”]{8,}”"#).is_match(text)
        || text.contains("ev-")
        || {
            let l = text.to_ascii_lowercase();
            l.contains("verified") || l.contains("confirmed") || l.contains("verbatim")
        }
}

/// The text with "quoted" and “quoted” words blanked (reported speech, titles).
fn blank_quotes(text: &str) -> String {
    let mut out = text.to_string();
    for (a, b) in crate::prose::quoted_ranges(text).into_iter().rev() {
        if text[a..].starts_with('"') || text[a..].starts_with('“') {
            out.replace_range(a..b, &" ".repeat(b - a));
        }
    }
    out
}

fn label_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(
        &R,
        r"(?i)^[\s>*•\-+0-9.]*(?:\*\*|__)?\s*(root cause|root|cause|causal chain|introduced by|exposed by|why|mechanism|diagnosis|explanation|2-hop causal chain|suspected[a-z ]*)\s*(?:\*\*|__)?\s*:",
    )
}

/// Lines of a pattern that explain its cause: labelled root-cause lines and the items
/// of a "Causal chain:" list.
pub(crate) fn root_cause_lines(r: &Report, s: &Section) -> Vec<usize> {
    let mut out = Vec::new();
    let mut in_chain = false;
    for n in s.line..=s.end {
        if r.fenced.contains(&n) {
            in_chain = false;
            continue;
        }
        let l = r.line(n);
        if l.trim().is_empty() {
            in_chain = false;
            continue;
        }
        if let Some(c) = label_re().captures(l) {
            let label = c.get(1).map(|m| m.as_str().to_ascii_lowercase()).unwrap_or_default();
            out.push(n);
            in_chain = label.contains("causal");
            continue;
        }
        if in_chain && crate::report::item_text(l).is_some() {
            out.push(n);
        } else {
            in_chain = false;
        }
    }
    out
}

pub(crate) fn check_hedges(cx: &mut Ctx<'_>, refs: &[FoundRef]) {
    let r = cx.report;
    let markdown = r.format == ReportFormat::Markdown;
    let ref_lines: BTreeSet<usize> = refs.iter().map(|f| f.line).collect();
    // (line, where): 0 a tier row, 1 root-cause text, 2 other pattern or TL;DR text.
    let mut scope: Vec<(usize, u8)> = Vec::new();
    for s in r.sections.iter().filter(|s| matches!(s.kind, SectionKind::Pattern | SectionKind::SubPattern)) {
        scope.extend(root_cause_lines(r, s).into_iter().map(|n| (n, 1)));
    }
    // Whatever else a pattern or the TL;DR says (headings, bullets, prose) states the
    // cause as the report sees it; the uncertainty, verification, method and appendix
    // sections are where doubt belongs.
    let exempt = |n: usize| {
        r.sections.iter().any(|s| {
            s.contains(n)
                && matches!(
                    s.kind,
                    SectionKind::Uncertainty
                        | SectionKind::Verifications
                        | SectionKind::Methodology
                        | SectionKind::Lessons
                        | SectionKind::Appendix
                )
        })
    };
    for s in r
        .sections
        .iter()
        .filter(|s| matches!(s.kind, SectionKind::Pattern | SectionKind::SubPattern | SectionKind::TlDr))
    {
        scope.extend(
            (s.line..=s.end)
                .filter(|n| !r.fenced.contains(n) && !r.line(*n).trim().is_empty() && !exempt(*n))
                .map(|n| (n, if s.kind == SectionKind::TlDr { 3 } else { 2 })),
        );
    }
    for s in r.sections.iter().filter(|s| matches!(s.kind, SectionKind::Tier(_))) {
        for t in r.tables_in(s) {
            scope.extend(t.rows.iter().map(|row| (row.line, 0)));
        }
        scope.extend(r.items_in(s).iter().map(|i| (i.line, 0)));
    }
    // A line in a tier table keeps the tier's stricter reading.
    scope.sort();
    scope.dedup_by_key(|x| x.0);
    let mut checked = 0;
    for (n, place) in scope {
        let root = place > 0;
        let line = r.line(n);
        // Code and quoted words are someone else's: blanked.
        let text = blank_quotes(&if markdown { without_code(line) } else { line.to_string() });
        // Sentence by sentence (table cells count as one sentence each).
        let mut words: Vec<String> = Vec::new();
        for sentence in text.split(['|', ';']).flat_map(|c| c.split(". ")) {
            let Some(m) = hedge_re().find(sentence) else { continue };
            checked += 1;
            if uncertain_re().is_match(sentence) {
                continue;
            }
            // Root-cause text may point at its evidence; a tier row's PR or diff is the
            // action, not evidence for the hedge.
            if root && has_evidence(sentence, ref_lines.contains(&n) && crate::report::has_ref_text(sentence), markdown)
            {
                continue;
            }
            words.push(m.as_str().to_string());
        }
        if !words.is_empty() {
            let where_ = ["a tier row", "root-cause text", "pattern text", "the TL;DR"][usize::from(place.min(3))];
            cx.flag(
                n,
                "hedge",
                format!(
                    "\"{}\" in {where_} stated as fact: no uncertainty marker (unverified, suspected, see Still open){}",
                    words.join("\", \""),
                    if root { " and no evidence pointer" } else { "" }
                ),
                Vec::new(),
            );
        }
    }
    cx.notes.insert("hedge", format!("{checked} hedged sentence(s) in pattern text, the TL;DR and tier rows"));
}

// ---- causal chains ----------------------------------------------------------------------

fn excluded_label_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(
        &R,
        r"(?i)^[\s>*•\-+0-9.]*(?:\*\*|__)?\s*(fix(?: shape| in flight| pr| attempt)?[a-z ()]*|tracker[a-z ]*|tracking[a-z ]*|umbrella|status[a-z ()0-9-]*|owner[a-z ]*|affected[a-z ]*|sampled? builds?|builds?|build samples?|one-line summary|workaround|action|tier [0-5][a-z ]*)\s*(?:\*\*|__)?\s*:",
    )
}

/// Lines that list what was read (`Evidence:`, `See also:`): the files there are where
/// something was looked at, not where it changed.
fn evidence_label_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(
        &R,
        r"(?i)^[\s>*•\-+0-9.]*(?:\*\*|__)?\s*(evidence|also|see also|related|references?|files?(?: read)?)\s*(?:\*\*|__)?\s*:",
    )
}

fn change_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(
        &R,
        r"(?i)\b(renamed|removed|removes|bumped|bumps?|upgraded|upgrades?|promot(?:ed|ion)|enabled|disabled|added|deleted|dropped|migrat(?:ed|ion)|switched|replaced|changed|moved|reaped|pruned|gc'd|garbage-collected|published|publish|decommission(?:ed|ing)?|deprecat(?:ed|ion)|enforce(?:d|ment)|introduced|rolled out|rollout|release[ds]?|regression|broke|broken)\b",
    )
}

fn marker_date_or_version_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"\b[0-9]{4}-[0-9]{2}-[0-9]{2}\b|\bv?[0-9]+\.[0-9]+(?:\.[0-9]+)?\b|→|->|\bfrom\b.+\bto\b")
}

fn unknown_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(
        &R,
        r"(?i)\bunknown\b|\bnot (?:yet )?(?:identified|pinned|found|known)\b|\bsee (?:the )?(?:uncertainty|still open)",
    )
}

fn sha_token_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"(?:^|[\s(,;])([0-9a-f]{7,40})(?:[\s),;.:]|$)")
}

/// A line that lists related things (`Related: #1`, `See also: #2`): nothing on it is
/// part of the chain.
fn related_label_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(
        &R,
        r"(?i)^[\s>*•\-+0-9.]*(?:\*\*|__)?\s*(related(?: prs?| issues?| changes?| work)?|see also|also|similar|cf\.?|duplicates?|other (?:prs?|issues?|changes?))\s*(?:\*\*|__)?\s*:",
    )
}

/// Words that make a change named in the sentence a related or separate one rather
/// than a link of the chain (`fixes a separate bug`, `unrelated`, `similar to #5`).
fn related_word_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(
        &R,
        r"(?i)\b(related|unrelated|separate(?:ly)?|similar|sibling|duplicates?|independent(?:ly)?|another (?:issue|bug|problem|cause|failure)|different (?:issue|bug|problem|cause|failure)|not (?:the|a) cause|not causal|does(?: not|n't) explain)\b",
    )
}

/// Words that make what follows a link of the chain, whatever else the sentence says.
fn causal_cue_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(
        &R,
        r"(?i)\b(introduced (?:by|in)|exposed (?:by|in)|caused by|broken by|broke|regressed (?:by|in)|regression (?:from|in|by)|culprit|root cause is|triggered by|started (?:with|after))\b",
    )
}

/// Byte ranges of a line's sentences (split at `. `, `;` and table cells).
fn sentence_ranges(line: &str) -> Vec<(usize, usize)> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    for i in 0..b.len() {
        let end = match b[i] {
            b';' | b'|' => true,
            b'.' => b.get(i + 1).is_none_or(|c| *c == b' '),
            _ => false,
        };
        if end {
            out.push((start, i));
            start = i + 1;
        }
    }
    out.push((start, b.len()));
    out
}

/// Whether what sits at byte `at` of `line` is named as related or separate: its
/// sentence says so, and no causal cue stands right before it.
fn related_at(line: &str, at: usize) -> bool {
    let Some((a, b)) = sentence_ranges(line).into_iter().find(|(a, b)| at >= *a && at <= *b) else { return false };
    let sentence = &line[a..b];
    if !related_word_re().is_match(sentence) {
        return false;
    }
    let head_start = line[a..at].char_indices().rev().nth(39).map_or(a, |(i, _)| a + i);
    !causal_cue_re().is_match(&line[head_start..at])
}

/// The parts of a causal chain a pattern's explanatory text names, whether it says
/// the chain is unknown, and the changes it names only as related or separate.
pub(crate) fn causal_parts(r: &Report, s: &Section, refs: &[FoundRef]) -> (Vec<String>, bool, Vec<String>) {
    let mut parts: BTreeSet<String> = BTreeSet::new();
    let mut related: BTreeSet<String> = BTreeSet::new();
    let mut unknown = false;
    for n in s.line + 1..=s.end {
        if r.fenced.contains(&n) {
            continue;
        }
        let l = r.line(n);
        if excluded_label_re().is_match(l) {
            continue;
        }
        let low = l.to_ascii_lowercase();
        if low.contains("tracked by") || low.contains("tracker") && !low.contains("introduc") {
            continue;
        }
        if unknown_re().is_match(l) {
            unknown = true;
        }
        let listed_related = related_label_re().is_match(l);
        for c in sha_token_re().captures_iter(l) {
            let Some(m) = c.get(1) else { continue };
            let t = m.as_str();
            if t.bytes().any(|b| b.is_ascii_digit()) && t.bytes().any(|b| b.is_ascii_alphabetic()) {
                if listed_related || related_at(l, m.start()) {
                    related.insert(format!("commit {t}"));
                } else {
                    parts.insert(format!("commit {t}"));
                }
            }
        }
        for f in refs.iter().filter(|f| f.line == n) {
            if listed_related || related_at(l, f.column.saturating_sub(1)) {
                related.insert(format!("ref {}", f.raw));
            } else {
                parts.insert(format!("ref {}", f.raw));
            }
        }
        // A configuration path with its lines: where a change was made.
        let listed_files = evidence_label_re().is_match(l) || listed_related;
        for c in file_line_re().captures_iter(l).filter(|_| !listed_files) {
            let path = c.get(3).map(|m| m.as_str()).unwrap_or("");
            let config = path.contains("config/")
                || path.contains("configs/")
                || [
                    ".yaml",
                    ".yml",
                    ".json",
                    ".toml",
                    ".cfg",
                    ".conf",
                    ".ini",
                    ".jsonnet",
                    ".libsonnet",
                    ".properties",
                    ".mk",
                    "Makefile",
                    "Dockerfile",
                    ".bzl",
                ]
                .iter()
                .any(|e| path.ends_with(e));
            // A line range of source code is where something is, not a change; a
            // configuration's lines are where a setting was changed.
            if config {
                parts.insert(format!("file {}", c.get(0).map(|m| m.as_str()).unwrap_or("")));
            }
        }
        if change_re().is_match(l) && marker_date_or_version_re().is_match(l) {
            if let Some(m) = change_re().find(l) {
                if listed_related || related_at(l, m.start()) {
                    related.insert(format!("change \"{}\" (line {n})", m.as_str()));
                } else {
                    parts.insert(format!("change \"{}\" (line {n})", m.as_str()));
                }
            }
        }
    }
    (parts.into_iter().collect(), unknown, related.into_iter().collect())
}

/// Labelled halves: (`Introduced by:` given, `Exposed by:` given).
fn labelled_halves(r: &Report, s: &Section) -> (bool, bool) {
    static I: OnceLock<Regex> = OnceLock::new();
    static E: OnceLock<Regex> = OnceLock::new();
    // `Introduced by: X` as a label, or `introduced by X` in a sentence.
    let intro = re(&I, r"(?i)\bintroduced (?:by|in)\s*(?:\*\*|__)?\s*:?\s*(?:\*\*|__)?\s*(\S.*)");
    let expo = re(&E, r"(?i)\bexposed (?:by|in)\s*(?:\*\*|__)?\s*:?\s*(?:\*\*|__)?\s*(\S.*)");
    let filled = |rx: &Regex| {
        (s.line..=s.end).any(|n| {
            rx.captures(r.line(n)).and_then(|c| c.get(1)).is_some_and(|m| {
                let v = m.as_str().trim();
                !v.is_empty() && !v.starts_with('{')
            })
        })
    };
    (filled(intro), filled(expo))
}

/// What a pattern's text names of its causal chain, with the sections its references
/// lead to read as part of it.
struct ChainReading {
    parts: Vec<String>,
    halves: usize,
    unknown: bool,
    related: Vec<String>,
    followed: Vec<String>,
    dangling: Vec<String>,
}

fn read_chain(r: &Report, p: &Section, refs: &[FoundRef]) -> ChainReading {
    let (follow, dangling) = crate::xref::followed(r, p);
    let mut parts: BTreeSet<String> = BTreeSet::new();
    let mut related: BTreeSet<String> = BTreeSet::new();
    let (mut intro, mut expo, mut unknown) = (false, false, false);
    for s in std::iter::once(p).chain(follow.iter()) {
        let (i, e) = labelled_halves(r, s);
        intro |= i;
        expo |= e;
        let (ps, u, rel) = causal_parts(r, s, refs);
        parts.extend(ps);
        related.extend(rel);
        unknown |= u;
    }
    let related: Vec<String> = related.into_iter().filter(|x| !parts.contains(x)).collect();
    let name = |s: &Section| {
        let t: String = r.line(s.line).trim().chars().take(40).collect();
        format!("line {} ({})", s.line, t.trim_start_matches(['#', ' ', '•', '-', '*']))
    };
    ChainReading {
        parts: parts.into_iter().collect(),
        halves: usize::from(intro) + usize::from(expo),
        unknown,
        related,
        followed: follow.iter().map(name).collect(),
        dangling: dangling.into_iter().map(|d| format!("\"{}\" (line {})", d.target, d.line)).collect(),
    }
}

pub(crate) fn check_causal_chain(cx: &mut Ctx<'_>, patterns: &[Section], refs: &[FoundRef]) {
    let r = cx.report;
    let mut verdicts = (0, 0, 0);
    let mut followed_total = 0;
    for p in patterns {
        let title: String = p.title.chars().take(70).collect();
        let c = read_chain(r, p, refs);
        followed_total += usize::from(!c.followed.is_empty());
        if c.halves == 2 {
            verdicts.0 += 1;
            continue;
        }
        match (c.parts.len() + c.halves, c.unknown) {
            (n, _) if n >= 2 => verdicts.0 += 1,
            (1, true) | (0, true) => verdicts.0 += 1,
            (1, false) => {
                verdicts.1 += 1;
                cx.skip(
                    p.line,
                    "causal-chain",
                    format!("\"{title}\""),
                    format!(
                        "names one change ({}) and does not say the other half is unknown; which half it is cannot be told from the text",
                        c.parts.first().cloned().unwrap_or_else(|| "a labelled half".into())
                    ),
                    Vec::new(),
                );
            }
            _ => {
                verdicts.2 += 1;
                let mut why = if c.related.is_empty() {
                    "names no part of a causal chain (commit, PR, path:line, dated or versioned change)".to_string()
                } else {
                    format!(
                        "names only related or separate changes ({}), neither an introducing nor an exposing change,",
                        c.related.join(", ")
                    )
                };
                why.push_str(" and does not say it is unknown");
                if !c.followed.is_empty() {
                    why.push_str(&format!(", also in what it refers to ({})", c.followed.join(", ")));
                }
                if !c.dangling.is_empty() {
                    why.push_str(&format!("; its reference(s) {} lead nowhere in the report", c.dangling.join(", ")));
                }
                cx.flag(p.line, "causal-chain", format!("\"{title}\" {why}"), Vec::new());
            }
        }
    }
    let followed = if followed_total > 0 {
        format!("; {followed_total} read with the sections their references lead to")
    } else {
        String::new()
    };
    cx.notes.insert(
        "causal-chain",
        format!(
            "{} named, {} with one part only (not checked), {} with none{followed}",
            verdicts.0, verdicts.1, verdicts.2
        ),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braces() {
        let slot = |l: &str| {
            brace_groups(l)
                .into_iter()
                .filter(|(a, b)| !code_like_braces(l, *a, *b))
                .map(|(a, b)| l[a..b].to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            slot("**{N1} of {N2} ({PCT}%)** {one-sentence overview}"),
            vec!["{N1}", "{N2}", "{PCT}", "{one-sentence overview}"]
        );
        assert_eq!(slot("Date: {YYYY-MM-DD}; CI {failures|flakes}"), vec!["{YYYY-MM-DD}", "{failures|flakes}"]);
        assert!(slot("e2e-kops-staging-registry-{azure,gcp} and ${PHASE:-x} and {{ .Values }}").is_empty());
        assert!(slot("+ if x { timeout = 60 * time.Second }").is_empty());
        assert!(slot("capz-{nnagb6,mvdhdg,admxf9}-md-win").is_empty());
        assert!(slot("queue &{0xc00039eae0 0xc0004142e8}: invalid; ts {%Y-%m-%dT%H:%M:%S.###Z}").is_empty());
    }

    #[test]
    fn todo_mentions() {
        let flagged = |l: &str| marker_hits(l).0.len();
        assert_eq!(flagged("originally guarded by TODO referencing k/k#113359"), 0);
        assert_eq!(flagged("removes e2eskipper.Skipf(...) with TODO // https://github.com/x/y/issues/1"), 0);
        assert_eq!(flagged("the test's // TODO: skip on Windows was removed"), 0);
        assert_eq!(flagged("No TODO / TBD / placeholder text remains"), 0);
        assert_eq!(flagged("**Owner**: TODO"), 1);
        assert_eq!(flagged("TODO confirm the owner."), 1);
        assert_eq!(flagged("| 2.3 | TBD | 1 |"), 1);
        assert_eq!(flagged("Fix shape: [placeholder]"), 1);
        assert_eq!(flagged("uses the placeholder image pause:3.9"), 0);
    }

    #[test]
    fn causal_parts_come_from_explanatory_text() {
        let parts = |text: &str| {
            let r = crate::report::parse(text);
            let s = r.patterns()[0].clone();
            causal_parts(&r, &s, &[]).0
        };
        // Files listed as evidence, and a range of source code, are not changes.
        assert!(parts(
            "### Pattern D — x\n**Root cause**: the Deployment never becomes Available.\n- evidence: `test/e2e/config/helm.yaml:88`, `test/e2e/data/calico.yaml:12`.\n- Root: pkg/a/registration_test.go:73-77 builds the selector from a map.\n"
        )
        .is_empty());
        // A commit named on an evidence line still is.
        assert_eq!(parts("### Pattern E — x\n- Evidence: commit abc1234f removed the skip.\n").len(), 1);
        // A configuration's lines and a dated change are.
        assert_eq!(
            parts("### Pattern B — x\n- exposed by `config/jobs/kops/build_jobs.py:555-566`, which forces nftables.\n- the image was published on 2025-10-26.\n")
                .len(),
            2
        );
    }

    #[test]
    fn hedges() {
        assert!(hedge_re().is_match("presumably the retry should clear it"));
        assert!(hedge_re().is_match("likely a config-side change"));
        assert!(!hedge_re().is_match("the job config should be deleted"));
        assert!(uncertain_re().is_match("likely a config-side change (unverified)"));
    }
}
