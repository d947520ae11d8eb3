//! The distinctive strings of a failure's explaining lines: quoted strings,
//! phrases, code symbols, resource names, file basenames, flags; the source
//! files its stack frames name; the failing `oc` sub-commands; the words of
//! its subject.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use regex::Regex;

use crate::lines::LogLine;
use crate::words::{
    distinctive_file, distinctive_name, distinctive_symbol, generic_file, generic_phrase, generic_word, quoted_name,
    random_piece,
};

/// Kinds of evidence tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TokenKind {
    Symbol,
    Name,
    File,
    Flag,
    Quoted,
    Phrase,
}

impl TokenKind {
    pub fn name(self) -> &'static str {
        match self {
            TokenKind::Symbol => "symbol",
            TokenKind::Name => "name",
            TokenKind::File => "file",
            TokenKind::Flag => "flag",
            TokenKind::Quoted => "quoted",
            TokenKind::Phrase => "phrase",
        }
    }

    pub fn rank(self) -> u8 {
        match self {
            TokenKind::Phrase | TokenKind::Quoted | TokenKind::Flag => 4,
            TokenKind::Name | TokenKind::File => 3,
            TokenKind::Symbol => 1,
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

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("built-in pattern"))
}

/// Extracts tokens, files, commands and words from a failure mode's evidence.
#[derive(Default)]
pub struct Matcher;

impl Matcher {
    /// Distinctive tokens of the evidence lines: quoted strings, phrases between
    /// `: ` separators (4+ words, 20+ characters), code symbols, resource names,
    /// file basenames, and flags (only from lines complaining about a flag).
    /// Each distinct text once, of the first kind and line that found it.
    pub fn tokens(&self, lines: &[LogLine]) -> Vec<Token> {
        let mut out: Vec<Token> = Vec::new();
        let mut seen = BTreeSet::new();
        for (i, l) in lines.iter().enumerate() {
            let text = printed(&l.text);
            let found =
                [quoted_tokens(&text), phrase_tokens(&text), flag_tokens(&text), name_file_symbol_tokens(&text)];
            for (t, kind) in found.into_iter().flatten() {
                if seen.insert(t.clone()) {
                    out.push(Token { text: t, kind, line: i });
                }
            }
        }
        out
    }

    /// Source files named by the evidence (stack frames, klog and Go test
    /// prefixes), with the index of the line naming them.
    pub fn evidence_files(&self, lines: &[LogLine]) -> BTreeMap<String, usize> {
        static FRAME: OnceLock<Regex> = OnceLock::new();
        let frame = re(&FRAME, r"([A-Za-z0-9_][A-Za-z0-9_.-]*\.(?:go|py|sh|rs|java|ts|js))(?::\d+)");
        let mut out = BTreeMap::new();
        for (i, l) in lines.iter().enumerate() {
            for c in frame.captures_iter(&l.text) {
                let f = c[1].to_string();
                if f.len() >= 5 && !generic_file(&f) {
                    out.entry(f).or_insert(i);
                }
            }
        }
        out
    }

    /// Sub-command paths of failing `oc` commands (`oc adm release extract` →
    /// `["release", "extract"]`), with the line index.
    pub fn commands(&self, lines: &[LogLine]) -> Vec<(Vec<String>, usize)> {
        static OC: OnceLock<Regex> = OnceLock::new();
        let oc = re(&OC, r"(?:^|[\s:>])oc (?:adm )?((?:[a-z][a-z-]+ ){1,2}[a-z][a-z-]+|[a-z][a-z-]+ [a-z][a-z-]+)");
        let mut out: Vec<(Vec<String>, usize)> = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            for c in oc.captures_iter(&l.text) {
                let words: Vec<String> =
                    c[1].split_whitespace().take_while(|w| !w.starts_with('-')).map(str::to_string).collect();
                // Two words at least, the last two are the path (`release extract`).
                if words.len() >= 2 {
                    let tail = words[words.len() - 2..].to_vec();
                    if !matches!(tail[0].as_str(), "get" | "create" | "apply" | "delete" | "patch" | "wait" | "logs")
                        && !out.iter().any(|(w, _)| *w == tail)
                    {
                        out.push((tail, i));
                    }
                }
            }
        }
        out
    }

    /// Words of the failure's subject, lower case, 5+ letters, no generic
    /// words, with where they came from: the failing tests' names (owner tags
    /// dropped, `kind/name` references reduced to their kind), the quoted strings
    /// and `kind/name` kinds of the explaining lines (without the tests' names and
    /// tags a line repeats: those are the test's words, not the error's), and the
    /// failing `oc` sub-commands. Paths and URLs say nothing of the subject.
    pub fn subject_words(&self, tests: &[String], lines: &[LogLine]) -> BTreeMap<String, (String, bool)> {
        static TAG: OnceLock<Regex> = OnceLock::new();
        static REF: OnceLock<Regex> = OnceLock::new();
        static QUOTED: OnceLock<Regex> = OnceLock::new();
        let tag = re(&TAG, r"\[[^\]]*\]");
        let rref = re(&REF, r"\b([A-Za-z][A-Za-z.]*)/[A-Za-z0-9][\w.-]*");
        let quoted = re(&QUOTED, r#""([^"\n]{3,120})"|'([^'\n]{3,120})'"#);
        let mut out = BTreeMap::new();
        let add = |text: &str, from: &str, strong: bool, out: &mut BTreeMap<String, (String, bool)>| {
            for w in crate::window::words(text) {
                if w.len() >= 5 && !generic_word(&w) {
                    let e = out.entry(w).or_insert_with(|| (from.to_string(), strong));
                    if strong && !e.1 {
                        *e = (from.to_string(), true);
                    }
                }
            }
        };
        for t in tests {
            let name = tag.replace_all(t, " ");
            let name = rref.replace_all(&name, "$1");
            add(&name, &format!("test {t}"), false, &mut out);
        }
        for l in lines {
            let from = format!("{}: {}", l.at.cite(), l.text);
            let mut text = l.text.clone();
            for t in tests.iter().filter(|t| t.len() >= 8) {
                text = text.replace(t.as_str(), " ");
            }
            let text = tag.replace_all(&text, " ");
            for c in quoted.captures_iter(&text) {
                let q = c.get(1).or_else(|| c.get(2)).map(|m| m.as_str()).unwrap_or("");
                if !q.contains('/') && !q.contains("://") {
                    add(q, &from, true, &mut out);
                }
            }
            for c in rref.captures_iter(&text) {
                let start = c.get(0).map(|m| m.start()).unwrap_or(0);
                let before = text[..start].chars().next_back();
                if !before.is_some_and(|b| b == '/' || b == '.' || b == ':' || b.is_ascii_alphanumeric()) {
                    add(&c[1], &from, true, &mut out);
                }
            }
        }
        for (comps, li) in self.commands(lines) {
            let l = &lines[li];
            add(&comps.join(" "), &format!("{}: {}", l.at.cite(), l.text), true, &mut out);
        }
        out
    }
}

/// A log line as the program printed its message: without the klog header
/// (`E0510 12:00:00.000000 1 `) and the source prefix (`reconcile.go:214] `).
pub fn printed(line: &str) -> String {
    static KLOG: OnceLock<Regex> = OnceLock::new();
    let klog = re(&KLOG, r"^[IWEF]\d{4} \d\d:\d\d:\d\d(\.\d+)?\s+\d+\s+");
    let text = klog.replace(line, "");
    crate::lines::strip_source_prefix(&text).to_string()
}

/// Quoted strings worth matching, and the basenames of quoted paths.
fn quoted_tokens(text: &str) -> Vec<(String, TokenKind)> {
    static QUOTED: OnceLock<Regex> = OnceLock::new();
    let quoted = re(&QUOTED, r#""([^"\n]{6,200})"|`([^`\n]{6,200})`|'([^'\n]{6,200})'"#);
    let mut out = Vec::new();
    for c in quoted.captures_iter(text) {
        let q = c.get(1).or_else(|| c.get(2)).or_else(|| c.get(3)).map(|m| m.as_str().trim()).unwrap_or("");
        let letters = q.chars().filter(|c| c.is_ascii_alphabetic()).count();
        if q.contains('/') && !q.contains(' ') {
            // A path: its basename may be what a change added.
            let base = q.rsplit('/').next().unwrap_or("");
            if distinctive_file(base) {
                out.push((base.to_string(), TokenKind::File));
            }
            continue;
        }
        if c.get(3).is_none() || quoted_phrase(text, c.get(0).map(|m| (m.start(), m.end())).unwrap_or_default()) {
            out.extend(quoted_names(q));
        }
        if q.len() >= 6
            && letters >= 4
            && !generic_phrase(q)
            && q.split(['-', '_', ' ', '.', '/']).all(|p| !random_piece(p))
            && (q.contains(' ') || distinctive_symbol(q) || distinctive_name(q) || q.len() >= 12)
        {
            out.push((q.to_string(), TokenKind::Quoted));
        }
    }
    out
}

/// True when single quotes at these bounds quote a phrase (`'secret "x" not
/// found'`), not apostrophes (`it's … don't`): no letter or digit touches them outside.
fn quoted_phrase(text: &str, (start, end): (usize, usize)) -> bool {
    let before = text[..start].chars().next_back();
    let after = text[end..].chars().next();
    !before.is_some_and(|c| c.is_ascii_alphanumeric()) && !after.is_some_and(|c| c.is_ascii_alphanumeric())
}

/// Names with a hyphen inside a quoted string or backticks (`nfd-creds`): someone
/// quoted them, so one hyphen is enough (outside quotes a name needs two). Not
/// a flag (`--dry-run`), not a piece of a path, URL or longer name.
fn quoted_names(q: &str) -> Vec<(String, TokenKind)> {
    static NAME: OnceLock<Regex> = OnceLock::new();
    let name = re(&NAME, r"[a-z][a-z0-9]*(?:-[a-z0-9]+)+");
    let mut out = Vec::new();
    for m in name.find_iter(q) {
        let before = q[..m.start()].chars().next_back();
        let mut after = q[m.end()..].chars();
        let (next, then) = (after.next(), after.next());
        let joined = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '/' | '_'));
        // A dot joins only when a name goes on after it (`nfd-creds.yaml`, not a full stop).
        let dotted =
            |c: Option<char>, then: Option<char>| c == Some('.') && then.is_some_and(|t| t.is_ascii_alphanumeric());
        if !joined(before)
            && before != Some('.')
            && !joined(next)
            && !dotted(next, then)
            && m.as_str().matches('-').count() == 1
            && quoted_name(m.as_str())
        {
            out.push((m.as_str().to_string(), TokenKind::Name));
        }
    }
    out
}

/// Phrases between `: ` separators: 4+ words, 20-200 characters, nothing run-specific.
fn phrase_tokens(text: &str) -> Vec<(String, TokenKind)> {
    let mut out = Vec::new();
    for seg in text.split(": ") {
        let seg = seg.trim().trim_matches(|c: char| c == '"' || c == '\'' || c == '.' || c == ',' || c == '`');
        let words = seg.split_whitespace().count();
        if words >= 4
            && seg.len() >= 20
            && seg.len() <= 200
            && !generic_phrase(seg)
            && seg.split_whitespace().all(|w| !random_piece(w.trim_matches(|c: char| !c.is_ascii_alphanumeric())))
        {
            out.push((seg.to_string(), TokenKind::Phrase));
        }
    }
    out
}

/// Flags, only from a line complaining about a flag.
fn flag_tokens(text: &str) -> Vec<(String, TokenKind)> {
    static FLAG: OnceLock<Regex> = OnceLock::new();
    static FLAG_LINE: OnceLock<Regex> = OnceLock::new();
    let flag = re(&FLAG, r"--[a-z][a-z0-9]*(?:-[a-z0-9]+)+|--[a-z][a-z0-9]{3,}");
    let flag_line = re(
        &FLAG_LINE,
        r"(?i)(unknown (shorthand )?flag|flag provided but not defined|invalid argument .* for .*flag|unrecognized (option|argument)|no such option)",
    );
    if !flag_line.is_match(text) {
        return Vec::new();
    }
    flag.find_iter(text).map(|m| (m.as_str().to_string(), TokenKind::Flag)).collect()
}

/// Resource names (not flags), file basenames (not Go sources) and code symbols.
fn name_file_symbol_tokens(text: &str) -> Vec<(String, TokenKind)> {
    static SYMBOL: OnceLock<Regex> = OnceLock::new();
    static NAME: OnceLock<Regex> = OnceLock::new();
    static FILE: OnceLock<Regex> = OnceLock::new();
    let symbol = re(&SYMBOL, r"\(?\*?[A-Za-z_][A-Za-z0-9_]*\)?(?:\.\(?\*?[A-Za-z_][A-Za-z0-9_]*\)?)*");
    let name = re(&NAME, r"[a-z][a-z0-9]*(?:-[a-z0-9]+){2,}");
    let file = re(&FILE, r"[A-Za-z0-9_][A-Za-z0-9_.-]*\.[A-Za-z0-9]{1,5}\b");
    let mut out = Vec::new();
    for m in name.find_iter(text) {
        let flagged = text[..m.start()].ends_with('-');
        if !flagged && distinctive_name(m.as_str()) {
            out.push((m.as_str().to_string(), TokenKind::Name));
        }
    }
    for m in file.find_iter(text) {
        let f = m.as_str().rsplit('/').next().unwrap_or("");
        if distinctive_file(f) && !generic_file(f) && !f.ends_with(".go") && !f.contains("..") {
            out.push((f.to_string(), TokenKind::File));
        }
    }
    for m in symbol.find_iter(text) {
        let s = m.as_str().trim_start_matches('(').trim_end_matches(')').trim_end_matches('.');
        if distinctive_symbol(s) {
            out.push((s.to_string(), TokenKind::Symbol));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lines::Location;
    use crate::words::generic_file;

    fn ll(t: &str, line: u32) -> LogLine {
        LogLine { text: t.into(), at: Location { file: "build-log.txt".into(), url: None, line: Some(line) } }
    }

    #[test]
    fn tokens() {
        let m = Matcher;
        let lines = vec![ll("E0510 12:00:00.000000 1 reconcile.go:214] failed to reconcile: nil pointer in reconcileNodeLabels while syncing", 12)];
        let toks = m.tokens(&lines);
        assert!(toks.iter().any(|t| t.text == "reconcileNodeLabels" && t.kind == TokenKind::Symbol), "{toks:?}");
        assert!(toks.iter().any(|t| t.text == "nil pointer in reconcileNodeLabels while syncing"), "{toks:?}");
        let toks = m.tokens(&[ll(r#"extracted binary at path "/tmp/c/oc-mirror-tests-ext.gz" does not exist"#, 1)]);
        assert!(toks.iter().any(|t| t.text == "oc-mirror-tests-ext.gz" && t.kind == TokenKind::File), "{toks:?}");
        let toks = m.tokens(&[ll(r#"Failed to get deployment e2e-clusters-wc4jk-create/x: deployments.apps "control-plane-metrics-forwarder" not found"#, 1)]);
        assert!(toks.iter().any(|t| t.text == "control-plane-metrics-forwarder"), "{toks:?}");
        assert!(!toks.iter().any(|t| t.text.contains("wc4jk")), "{toks:?}");
        // Flags only from lines complaining about flags.
        assert!(m
            .tokens(&[ll("running oc --kubeconfig=/tmp/k get pods failed", 1)])
            .iter()
            .all(|t| t.kind != TokenKind::Flag));
        assert!(m.tokens(&[ll("Error: unknown flag: --log-level-v2", 1)]).iter().any(|t| t.text == "--log-level-v2"));
        assert!(m.tokens(&[ll("error: timed out waiting for the condition on ClusterVersion", 1)]).is_empty());
        // A file named for its role (common.sh, setup.py) is in every repository: never a token.
        let toks = m.tokens(&[ll("/home/ci/dev-scripts/common.sh: line 42: failed to mirror release image", 1)]);
        assert!(toks.iter().all(|t| t.kind != TokenKind::File), "{toks:?}");
        assert!(generic_file("common.sh") && generic_file("Setup.py") && generic_file("util.go"));
        assert!(!generic_file("gather_nfd.sh") && !generic_file("oc-mirror-tests-ext.gz"));
        let files = m.evidence_files(&[ll("common.sh:42: error", 1), ll("mirror_release.sh:7: error", 2)]);
        assert_eq!(files.keys().collect::<Vec<_>>(), ["mirror_release.sh"]);
    }
}
