//! Reading a triage report: a careful line-based parser of Markdown headings, tables,
//! list items, fenced blocks and inline code spans, with 1-based line numbers and each
//! section classified by its title (TL;DR, patterns, tiers, uncertainty, lessons...).
//! Reports copied out of a rendered web page lose their Markdown; for those the
//! parser recognises the runbook's section titles as plain lines and marks the
//! document [`ReportFormat::Rendered`], so table-dependent checks can say they do not
//! apply instead of guessing.

use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// Whether the text kept its Markdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReportFormat {
    Markdown,
    /// Plain text copied from a rendered page: headings are plain lines, table cells
    /// and code spans are lost.
    Rendered,
}

/// What a section is, from its title.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SectionKind {
    Title,
    Status,
    TlDr,
    Patterns,
    Pattern,
    SubPattern,
    Misclassifications,
    ActionPlan,
    Tier(u8),
    Methodology,
    Verifications,
    Uncertainty,
    Lessons,
    Appendix,
    Other,
}

/// A heading and the lines it governs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Section {
    /// 1-based line of the heading.
    pub line: usize,
    /// 1 for `#`, 2 for `##`, ...
    pub level: u8,
    pub title: String,
    pub kind: SectionKind,
    /// Last line of the section (inclusive): the line before the next heading of the
    /// same or a higher level, or the last line.
    pub end: usize,
}

impl Section {
    /// True when a line belongs to the section (heading included).
    pub fn contains(&self, line: usize) -> bool {
        line >= self.line && line <= self.end
    }
}

/// One table row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Row {
    pub line: usize,
    pub cells: Vec<String>,
}

/// A Markdown table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Table {
    /// Line of the header row.
    pub line: usize,
    pub header: Vec<String>,
    pub rows: Vec<Row>,
}

/// One list item (its first line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListItem {
    pub line: usize,
    /// Leading spaces.
    pub indent: usize,
    /// The number of an ordered item.
    pub number: Option<u64>,
    pub text: String,
}

/// A parsed report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    pub format: ReportFormat,
    /// The lines, without terminators (line `n` is `lines[n - 1]`).
    pub lines: Vec<String>,
    pub sections: Vec<Section>,
    pub tables: Vec<Table>,
    pub items: Vec<ListItem>,
    /// Lines inside fenced code blocks (fences included).
    pub fenced: BTreeSet<usize>,
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("static regex"))
}

fn atx_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
}

fn item_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"^(\s*)(?:([-*+•])|([0-9]{1,3})[.)])\s+(.*)$")
}

fn tier_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"(?i)\btier\s*([0-5])\b")
}

fn pattern_title_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"^(?:Pattern|Cluster)\s+([A-Z]{1,2}|[0-9]{1,2})(\.[A-Za-z0-9.]+)?\s*(?:[—:–-]|\(|$)")
}

fn sub_title_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"^(?:Sub-pattern|Bucket)\s+\S+|^[A-Z][A-Za-z0-9]{0,3}(?:\.[A-Za-z0-9]{1,4})+\s+[—–-]\s")
}

/// Classifies a section title.
pub fn classify(title: &str) -> SectionKind {
    let t = strip_decorations(title);
    let l = t.to_ascii_lowercase();
    if l.contains("triage report") {
        return SectionKind::Title;
    }
    if l.starts_with("tl;dr") || l == "tldr" || l.starts_with("tldr ") {
        return SectionKind::TlDr;
    }
    if let Some(c) = tier_re().captures(&t) {
        if let Some(n) = c.get(1).and_then(|m| m.as_str().parse().ok()) {
            return SectionKind::Tier(n);
        }
    }
    if sub_title_re().is_match(&t) {
        return SectionKind::SubPattern;
    }
    if let Some(c) = pattern_title_re().captures(&t) {
        return if c.get(2).is_some() { SectionKind::SubPattern } else { SectionKind::Pattern };
    }
    if l.contains("lessons") || l.contains("first-pass got wrong") {
        return SectionKind::Lessons;
    }
    if l.contains("misclassif") {
        return SectionKind::Misclassifications;
    }
    if l.contains("still open")
        || l.contains("uncertainty")
        || l.contains("could not verify")
        || l.contains("not verified")
        || l.contains("unverified")
        || l.contains("not investigated")
    {
        return SectionKind::Uncertainty;
    }
    if l.contains("patterns") {
        return SectionKind::Patterns;
    }
    if l.contains("action plan") {
        return SectionKind::ActionPlan;
    }
    if l.contains("methodology") {
        return SectionKind::Methodology;
    }
    if l.contains("verification") || l.contains("open questions") {
        return SectionKind::Verifications;
    }
    if l.starts_with("appendix") {
        return SectionKind::Appendix;
    }
    if l.starts_with("status") {
        return SectionKind::Status;
    }
    SectionKind::Other
}

/// A title without emoji, a leading section number (`1.`) or Markdown emphasis.
pub fn strip_decorations(title: &str) -> String {
    let t: String = title.chars().filter(|c| c.is_ascii() || c.is_alphanumeric() || matches!(c, '—' | '–')).collect();
    let t = t.replace("**", "").replace('`', "");
    let t = t.trim();
    let rest = t.trim_start_matches(|c: char| c.is_ascii_digit());
    match rest.strip_prefix(". ") {
        Some(r) if rest.len() < t.len() => r.trim().to_string(),
        _ => t.to_string(),
    }
}

/// Splits a table row into cells (`\|` and pipes inside code spans do not split).
pub fn split_row(line: &str) -> Vec<String> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').filter(|x| !x.ends_with('\\')).unwrap_or(t);
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut in_code = false;
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cur.push('|');
                chars.next();
            }
            '`' => {
                in_code = !in_code;
                cur.push(c);
            }
            '|' if !in_code => {
                cells.push(cur.trim().to_string());
                cur.clear();
            }
            _ => cur.push(c),
        }
    }
    cells.push(cur.trim().to_string());
    cells
}

fn is_delimiter_row(line: &str) -> bool {
    let cells = split_row(line);
    !cells.is_empty()
        && line.contains('-')
        && cells.iter().all(|c| {
            let c = c.trim();
            !c.is_empty() && c.chars().all(|x| x == '-' || x == ':') && c.contains('-')
        })
}

/// Inline code spans of a line as byte ranges (single or multiple backticks).
pub fn code_spans(line: &str) -> Vec<(usize, usize)> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'`' {
            let mut n = 0;
            while i + n < b.len() && b[i + n] == b'`' {
                n += 1;
            }
            let open_end = i + n;
            let mut j = open_end;
            let mut found = None;
            while j < b.len() {
                if b[j] == b'`' {
                    let mut m = 0;
                    while j + m < b.len() && b[j + m] == b'`' {
                        m += 1;
                    }
                    if m == n {
                        found = Some(j + m);
                        break;
                    }
                    j += m;
                } else {
                    j += 1;
                }
            }
            match found {
                Some(end) => {
                    out.push((i, end));
                    i = end;
                }
                None => i = open_end,
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The text of a list item line (`- x`, `1. x`, `• x`), if the line is one.
pub fn item_text(line: &str) -> Option<&str> {
    item_re().captures(line).and_then(|c| c.get(4)).map(|m| m.as_str())
}

/// Whether a piece of text cites a PR or issue (`#N`, `repo#N`, a GitHub pull/issue URL).
pub fn has_ref_text(text: &str) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"(?:^|[^&\w])[A-Za-z0-9_./-]*#[0-9]+\b|github\.com/[^/\s]+/[^/\s]+/(?:pull|issues)/[0-9]+").is_match(text)
}

/// The line with inline code spans blanked out (same length; offsets stay valid).
pub fn without_code(line: &str) -> String {
    let mut s: Vec<u8> = line.as_bytes().to_vec();
    for (a, b) in code_spans(line) {
        for x in &mut s[a..b] {
            *x = b' ';
        }
    }
    String::from_utf8(s).unwrap_or_default()
}

/// Titles a rendered report shows as plain lines, and their levels.
fn rendered_heading(line: &str) -> Option<u8> {
    let t = line.trim_end();
    if t.is_empty() || t.len() > 160 || t.starts_with(char::is_whitespace) {
        return None;
    }
    let l = t.to_ascii_lowercase();
    if l.contains("triage report") && !l.contains(" in ") {
        return Some(1);
    }
    static NUM: OnceLock<Regex> = OnceLock::new();
    if re(&NUM, r"^[0-9]{1,2}\. [A-Z]").is_match(t) && t.len() < 90 {
        return Some(2);
    }
    if ["tl;dr", "quick navigation", "appendix"].contains(&l.as_str()) || l.starts_with("status — ") {
        return Some(2);
    }
    if tier_re().is_match(t) && t.contains('—') && t.len() < 90 {
        return Some(3);
    }
    static Q: OnceLock<Regex> = OnceLock::new();
    if re(&Q, r"^Q[0-9]{1,2} — ").is_match(t) {
        return Some(3);
    }
    if matches!(classify(t), SectionKind::Pattern) && t.contains('—') {
        return Some(3);
    }
    if (l.starts_with("still open") || l.starts_with("lessons")) && t.len() < 90 {
        return Some(3);
    }
    if matches!(classify(t), SectionKind::SubPattern) && t.len() < 150 {
        return Some(4);
    }
    None
}

/// Parses a report.
pub fn parse(text: &str) -> Report {
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    let fenced = citriage_github::fenced_lines(text);
    let mut heads: Vec<(usize, u8, String)> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let n = i + 1;
        if fenced.contains(&n) {
            continue;
        }
        if let Some(c) = atx_re().captures(l) {
            let level = c.get(1).map(|m| m.as_str().len()).unwrap_or(1) as u8;
            heads.push((n, level, c.get(2).map(|m| m.as_str().to_string()).unwrap_or_default()));
        }
    }
    let has_tables = lines.iter().any(|l| is_delimiter_row(l) && l.trim_start().starts_with('|'));
    // A flattened table header (`# Item Status`) looks like a level-1 heading; real
    // Markdown reports have tables, level-2+ headings, or open with their `#` title.
    let first_text = lines.iter().position(|l| !l.trim().is_empty()).map(|i| i + 1);
    let markdown = has_tables || heads.iter().any(|(n, level, _)| *level >= 2 || Some(*n) == first_text);
    let format = if markdown { ReportFormat::Markdown } else { ReportFormat::Rendered };
    if format == ReportFormat::Rendered {
        heads.clear();
        for (i, l) in lines.iter().enumerate() {
            if let Some(level) = rendered_heading(l) {
                heads.push((i + 1, level, l.trim().to_string()));
            }
        }
    }
    let mut sections: Vec<Section> = Vec::with_capacity(heads.len());
    for (k, (line, level, title)) in heads.iter().enumerate() {
        let end = heads[k + 1..].iter().find(|(_, lv, _)| lv <= level).map(|(l, _, _)| l - 1).unwrap_or(lines.len());
        sections.push(Section { line: *line, level: *level, kind: classify(title), title: title.clone(), end });
    }
    // Tables.
    let mut tables = Vec::new();
    let mut i = 0;
    while i + 1 < lines.len() {
        let n = i + 1;
        if !fenced.contains(&n) && lines[i].trim_start().starts_with('|') && is_delimiter_row(&lines[i + 1]) {
            let header = split_row(&lines[i]);
            let mut rows = Vec::new();
            let mut j = i + 2;
            while j < lines.len() && lines[j].trim_start().starts_with('|') && !fenced.contains(&(j + 1)) {
                rows.push(Row { line: j + 1, cells: split_row(&lines[j]) });
                j += 1;
            }
            tables.push(Table { line: n, header, rows });
            i = j;
        } else {
            i += 1;
        }
    }
    // List items.
    let mut items = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if fenced.contains(&(i + 1)) || l.trim_start().starts_with('|') {
            continue;
        }
        if let Some(c) = item_re().captures(l) {
            let indent = c.get(1).map(|m| m.as_str().chars().count()).unwrap_or(0);
            // In rendered text a column-0 `1. Title` is a heading, not an item.
            if format == ReportFormat::Rendered && indent == 0 && c.get(3).is_some() && rendered_heading(l).is_some() {
                continue;
            }
            items.push(ListItem {
                line: i + 1,
                indent,
                number: c.get(3).and_then(|m| m.as_str().parse().ok()),
                text: c.get(4).map(|m| m.as_str().to_string()).unwrap_or_default(),
            });
        }
    }
    Report { format, lines, sections, tables, items, fenced }
}

impl Report {
    /// In text copied from a rendered page, the rows of tables that state a status: the
    /// lines after a header line of column titles (`PR State Block`, `# Item Status`)
    /// up to the next blank line or heading. Their cells are flattened into one line.
    pub fn rendered_status_rows(&self) -> BTreeSet<usize> {
        let mut out = BTreeSet::new();
        if self.format != ReportFormat::Rendered {
            return out;
        }
        let heading_lines: BTreeSet<usize> = self.sections.iter().map(|s| s.line).collect();
        let is_header = |l: &str| {
            let words: Vec<&str> = l.split_whitespace().collect();
            (2..=10).contains(&words.len())
                && words.iter().any(|w| ["status", "state", "block"].contains(&w.to_ascii_lowercase().as_str()))
                && words.iter().all(|w| {
                    *w == "#"
                        || w.chars().next().is_some_and(|c| c.is_uppercase())
                        || w.chars().all(|c| c.is_lowercase())
                })
                && !l.chars().any(|c| c.is_ascii_digit())
                && item_re().captures(l).is_none()
        };
        let mut n = 1;
        while n <= self.lines.len() {
            let l = self.line(n);
            if !self.fenced.contains(&n) && !heading_lines.contains(&n) && is_header(l.trim()) {
                let mut k = n + 1;
                while k <= self.lines.len() && !self.line(k).trim().is_empty() && !heading_lines.contains(&k) {
                    out.insert(k);
                    k += 1;
                }
                n = k;
            } else {
                n += 1;
            }
        }
        out
    }

    /// Line `n` (1-based), or `""`.
    pub fn line(&self, n: usize) -> &str {
        n.checked_sub(1).and_then(|i| self.lines.get(i)).map(String::as_str).unwrap_or("")
    }

    /// Sections of a kind, in order.
    pub fn sections_of(&self, kind: SectionKind) -> Vec<&Section> {
        self.sections.iter().filter(|s| s.kind == kind).collect()
    }

    /// The innermost section containing a line.
    pub fn section_at(&self, line: usize) -> Option<&Section> {
        self.sections.iter().filter(|s| s.contains(line)).max_by_key(|s| (s.level, s.line))
    }

    /// Tables whose header lies in a section.
    pub fn tables_in(&self, s: &Section) -> Vec<&Table> {
        self.tables.iter().filter(|t| s.contains(t.line)).collect()
    }

    /// List items in a section.
    pub fn items_in(&self, s: &Section) -> Vec<&ListItem> {
        self.items.iter().filter(|i| s.contains(i.line)).collect()
    }

    /// Pattern sections (top-level patterns, not sub-patterns).
    pub fn patterns(&self) -> Vec<&Section> {
        self.sections_of(SectionKind::Pattern)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_titles() {
        assert_eq!(classify("TL;DR"), SectionKind::TlDr);
        assert_eq!(classify("1. The 11 Patterns"), SectionKind::Patterns);
        assert_eq!(classify("Pattern A — capdo (6 jobs)"), SectionKind::Pattern);
        assert_eq!(classify("Pattern A.1 — sub"), SectionKind::SubPattern);
        assert_eq!(classify("Sub-pattern A.D.1 — volumemanager"), SectionKind::SubPattern);
        assert_eq!(classify("C.Q.1 — CAPA -k8s-ci-artifacts vs master k8s skew (4 jobs)"), SectionKind::SubPattern);
        assert_eq!(classify("🟢 Tier 0 — Done in this run"), SectionKind::Tier(0));
        assert_eq!(classify("🔵 Tier 5 — Deletion candidates"), SectionKind::Tier(5));
        assert_eq!(classify("Still open (not investigated to closure)"), SectionKind::Uncertainty);
        assert_eq!(classify("5. Verifications and open questions"), SectionKind::Verifications);
        assert_eq!(classify("6. Lessons (what first-pass got wrong)"), SectionKind::Lessons);
        assert_eq!(classify("2. Misclassifications (NOT real failures)"), SectionKind::Misclassifications);
        assert_eq!(classify("Kubernetes CI Failures — Triage Report"), SectionKind::Title);
    }

    #[test]
    fn parses_markdown_structure() {
        let md = "# T — Triage Report\n\n## TL;DR\n1. a\n2. b\n   - nested\n\n## 3. Action plan\n### Tier 1 — x\n| # | Action | Status |\n|---|---|---|\n| 1.1 | do `a|b` \\| c | OPEN |\n\n```\n## not a heading\n| not | a table |\n```\n";
        let r = parse(md);
        assert_eq!(r.format, ReportFormat::Markdown);
        let titles: Vec<(usize, u8, SectionKind)> = r.sections.iter().map(|s| (s.line, s.level, s.kind)).collect();
        assert_eq!(
            titles,
            vec![
                (1, 1, SectionKind::Title),
                (3, 2, SectionKind::TlDr),
                (8, 2, SectionKind::ActionPlan),
                (9, 3, SectionKind::Tier(1))
            ]
        );
        assert_eq!(r.sections[1].end, 7);
        assert_eq!(r.tables.len(), 1);
        assert_eq!(r.tables[0].rows[0].cells, vec!["1.1", "do `a|b` | c", "OPEN"]);
        let tl = r.sections_of(SectionKind::TlDr)[0];
        assert_eq!(r.items_in(tl).iter().filter(|i| i.number.is_some()).count(), 2);
        assert!(r.fenced.contains(&15));
        assert_eq!(r.section_at(12).unwrap().kind, SectionKind::Tier(1));
    }

    #[test]
    fn parses_rendered_text() {
        let txt = "Kubernetes CI Failures — Triage Report (v3)\n\nTL;DR\n\nThree takeaways:\n\n  1. one\n\n  2. two\n\n1. The 12 Patterns\n\nPattern A — Stale pins (18 jobs)\n\n  • bullet\n\nC.Q.1 — sub (4 jobs)\n\n3. Action plan\n\n🟢 Tier 0 — Done\n";
        let r = parse(txt);
        assert_eq!(r.format, ReportFormat::Rendered);
        let kinds: Vec<SectionKind> = r.sections.iter().map(|s| s.kind).collect();
        assert_eq!(
            kinds,
            vec![
                SectionKind::Title,
                SectionKind::TlDr,
                SectionKind::Patterns,
                SectionKind::Pattern,
                SectionKind::SubPattern,
                SectionKind::ActionPlan,
                SectionKind::Tier(0)
            ]
        );
        let tl = r.sections_of(SectionKind::TlDr)[0];
        assert_eq!(r.items_in(tl).len(), 2);
        assert_eq!(r.items.iter().filter(|i| i.text == "bullet").count(), 1);
    }

    #[test]
    fn code_spans_are_found() {
        assert_eq!(code_spans("a `b` c ``d`e`` f `g"), vec![(2, 5), (8, 15)]);
        assert_eq!(without_code("x `TODO` y"), "x        y");
    }
}
