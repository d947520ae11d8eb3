//! Reading sentences: a tokenizer for one report line (references, URLs, words,
//! punctuation, emoji, dates) that knows which tokens sit inside quotation marks,
//! strike-through or parentheses, the split of a line into clauses, and the modality
//! of a word inside its clause (asserted, negated, conditional, future, quoted,
//! question). The claim extractors build on these; nothing here knows about GitHub.

use crate::report::without_code;
use regex::Regex;
use std::sync::OnceLock;

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokKind {
    /// A PR/issue reference: the index into the references given to [`tokenize`].
    Ref(usize),
    /// A URL that is not a reference.
    Url,
    Word,
    /// `YYYY-MM-DD` (a range such as `2026-05-09/10` counts too).
    Date,
    /// `18:09:46Z`, `12:14`.
    Time,
    Punct,
    Emoji,
    /// A blanked inline code span.
    Code,
}

/// One token of a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tok {
    pub kind: TokKind,
    pub text: String,
    /// Lower-cased text.
    pub lower: String,
    /// Byte range in the line.
    pub start: usize,
    pub end: usize,
    /// Inside "quotation marks" or ~~strike-through~~: someone else's words, or text the
    /// author withdrew.
    pub quoted: bool,
    /// Parenthesis depth.
    pub depth: u32,
}

impl Tok {
    pub fn is(&self, w: &str) -> bool {
        self.lower == w
    }

    pub fn is_punct(&self, p: &str) -> bool {
        self.kind == TokKind::Punct && self.text == p
    }

    pub fn is_word(&self) -> bool {
        self.kind == TokKind::Word
    }
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("static regex"))
}

fn url_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r#"https?://[^\s<>()\[\]|`"']+"#)
}

fn date_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"^[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[T ][0-9:.]+Z?)?(?:/[0-9]{1,2})?$")
}

fn time_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"^[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?(?:\.[0-9]+)?Z?$")
}

/// True for pictographs used as status marks (✅ ❌ 🟢 🟡 ⚪ 🔴 ...).
pub fn is_emoji(c: char) -> bool {
    matches!(c as u32, 0x1F300..=0x1FAFF | 0x2600..=0x27BF | 0x2B00..=0x2BFF | 0x2190..=0x21FF if c != '→' && c != '←')
        || matches!(c, '⚠' | '✓' | '✔' | '✗' | '✘')
}

fn word_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '/' | '\'' | '’' | '.' | '@' | '~' | '%' | '#' | ':')
}

/// Byte ranges of "quoted" and ~~struck~~ text on a line (balanced pairs only).
pub fn quoted_ranges(line: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    // Straight double quotes, paired left to right.
    let dq: Vec<usize> = line.match_indices('"').map(|(i, _)| i).collect();
    for p in dq.chunks(2) {
        if let [a, b] = p {
            out.push((*a, *b + 1));
        }
    }
    // Curly quotes.
    let mut open: Option<usize> = None;
    for (i, c) in line.char_indices() {
        match c {
            '“' => open = Some(i),
            '”' => {
                if let Some(a) = open.take() {
                    out.push((a, i + c.len_utf8()));
                }
            }
            _ => {}
        }
    }
    // Strike-through.
    let st: Vec<usize> = line.match_indices("~~").map(|(i, _)| i).collect();
    for p in st.chunks(2) {
        if let [a, b] = p {
            out.push((*a, *b + 2));
        }
    }
    out.sort();
    out
}

/// Tokenizes a line. `refs` are the byte spans of the references on it (sorted); code
/// spans become single `Code` tokens when `markdown` (their text is someone's code,
/// not the report's words).
pub fn tokenize(line: &str, refs: &[(usize, usize)], markdown: bool) -> Vec<Tok> {
    let masked = if markdown { without_code(line) } else { line.to_string() };
    let code: Vec<(usize, usize)> = if markdown { crate::report::code_spans(line) } else { Vec::new() };
    let quotes = quoted_ranges(&masked);
    let urls: Vec<(usize, usize)> = url_re()
        .find_iter(&masked)
        .map(|m| {
            let t = m.as_str().trim_end_matches(['.', ',', ';', ':', '!', '?', '*', '_']);
            (m.start(), m.start() + t.len())
        })
        .collect();
    // Lookups by byte offset, so a long line stays linear.
    let mut quoted_at = vec![false; masked.len() + 1];
    for (a, b) in &quotes {
        for q in quoted_at.iter_mut().take(*b).skip(a + 1) {
            *q = true;
        }
    }
    let in_quote = |i: usize| quoted_at.get(i).copied().unwrap_or(false);
    let ref_at: std::collections::BTreeMap<usize, (usize, (usize, usize))> =
        refs.iter().copied().enumerate().map(|(k, r)| (r.0, (k, r))).collect();
    let code_at: std::collections::BTreeMap<usize, usize> = code.iter().copied().collect();
    let url_at: std::collections::BTreeMap<usize, usize> = urls.iter().copied().collect();
    let mut toks: Vec<Tok> = Vec::new();
    let mut depth = 0u32;
    let push = |toks: &mut Vec<Tok>, kind: TokKind, start: usize, end: usize, depth: u32| {
        let text = line.get(start..end).unwrap_or("").to_string();
        let lower = text.to_lowercase();
        toks.push(Tok { kind, text, lower, start, end, quoted: in_quote(start), depth });
    };
    let bytes_len = masked.len();
    let mut i = 0;
    while i < bytes_len {
        if let Some(&(k, (a, b))) = ref_at.get(&i) {
            push(&mut toks, TokKind::Ref(k), a, b, depth);
            i = b.max(i + 1);
            continue;
        }
        if let Some(&b) = code_at.get(&i) {
            push(&mut toks, TokKind::Code, i, b, depth);
            i = b.max(i + 1);
            continue;
        }
        if let Some(&b) = url_at.get(&i) {
            // A URL holding a reference is the reference.
            if let Some((_, &(k, (ra, rb)))) = ref_at.range(i..b).next() {
                push(&mut toks, TokKind::Ref(k), ra, rb, depth);
            } else {
                push(&mut toks, TokKind::Url, i, b, depth);
            }
            i = b.max(i + 1);
            continue;
        }
        let Some(c) = masked[i..].chars().next() else { break };
        let n = c.len_utf8();
        if c.is_whitespace() || c == '\u{FE0F}' || c == '\u{200D}' || c == '*' || c == '`' {
            i += n;
            continue;
        }
        if is_emoji(c) {
            push(&mut toks, TokKind::Emoji, i, i + n, depth);
            i += n;
            continue;
        }
        if word_char(c) && !(c == '~' && masked[i..].starts_with("~~")) {
            let mut j = i;
            for (off, d) in masked[i..].char_indices() {
                let at = i + off;
                if at > i && ref_at.contains_key(&at) {
                    break;
                }
                if !word_char(d) || (d == '~' && masked[at..].starts_with("~~")) {
                    break;
                }
                j = at + d.len_utf8();
            }
            // Trailing punctuation and emphasis markers are not part of the word.
            let mut end = j;
            while end > i {
                let last = masked[..end].chars().next_back().unwrap_or(' ');
                if matches!(last, '.' | ',' | ':' | '\'' | '’' | '_' | '-' | '/' | '~' | '#') {
                    end -= last.len_utf8();
                } else {
                    break;
                }
            }
            let mut start = i;
            while start < end {
                let first = masked[start..].chars().next().unwrap_or(' ');
                if matches!(first, '_' | '\'' | '’' | '~' | '.' | ':') {
                    start += first.len_utf8();
                } else {
                    break;
                }
            }
            if end > start {
                let w = &masked[start..end];
                let kind = if date_re().is_match(w) {
                    TokKind::Date
                } else if time_re().is_match(w) {
                    TokKind::Time
                } else {
                    TokKind::Word
                };
                push(&mut toks, kind, start, end, depth);
            }
            // What was trimmed becomes punctuation tokens.
            for (off, d) in masked[end..j].char_indices() {
                if !matches!(d, '_' | '\'' | '’' | '~') {
                    push(&mut toks, TokKind::Punct, end + off, end + off + d.len_utf8(), depth);
                }
            }
            i = j.max(i + n);
            continue;
        }
        if c == '(' || c == '[' {
            push(&mut toks, TokKind::Punct, i, i + n, depth);
            depth += 1;
        } else if c == ')' || c == ']' {
            depth = depth.saturating_sub(1);
            push(&mut toks, TokKind::Punct, i, i + n, depth);
        } else {
            push(&mut toks, TokKind::Punct, i, i + n, depth);
        }
        i += n;
    }
    toks
}

const ABBREVIATIONS: &[&str] = &["e.g", "i.e", "vs", "etc", "approx", "cf", "no", "fig", "ca", "incl", "resp"];

/// Splits tokens into clauses at `;`, `!`, `?`, `|` and sentence-ending periods. Returns
/// half-open index ranges; a clause ending in `?` is marked as a question.
pub fn clauses(toks: &[Tok]) -> Vec<(usize, usize, bool)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, t) in toks.iter().enumerate() {
        if t.kind != TokKind::Punct {
            continue;
        }
        let end_here = match t.text.as_str() {
            ";" | "!" | "?" | "|" => true,
            "." => {
                let prev_abbrev = i > 0 && ABBREVIATIONS.contains(&toks[i - 1].lower.as_str());
                !prev_abbrev && t.depth == 0
            }
            _ => false,
        };
        if end_here {
            out.push((start, i + 1, t.text == "?"));
            start = i + 1;
        }
    }
    if start < toks.len() {
        out.push((start, toks.len(), false));
    }
    out
}

/// How a word is meant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Modality {
    Asserted,
    /// Under `if`, `unless`, `once ... is`, `until ... is`: a condition, not a state.
    Conditional,
    /// Under `will`, `should`, `to be`, `waiting to`: a prediction or a plan.
    Future,
    /// Inside quotation marks or strike-through.
    Quoted,
    Question,
}

const SUBORDINATORS: &[&str] = &["if", "unless", "whether", "assuming", "provided", "suppose", "supposing"];
const TEMPORAL: &[&str] = &["once", "when", "whenever", "until", "till", "before", "after"];
const PRESENT_AUX: &[&str] = &["is", "are", "gets", "get", "becomes", "become", "be", "merges", "lands"];
const MODALS: &[&str] = &[
    "will",
    "would",
    "could",
    "should",
    "may",
    "might",
    "can",
    "shall",
    "must",
    "going",
    "about",
    "expected",
    "likely",
    "to",
    "pending",
    "awaiting",
    "waiting",
    "hopefully",
    "soon",
    "wont",
    "won't",
];
const NEGATORS: &[&str] = &["not", "never", "no", "nor", "without", "neither"];
const PAST_MARKERS: &[&str] = &["was", "were", "had", "previously", "earlier", "originally", "formerly"];
/// Verbs that report someone else's words: what follows is their claim, not the report's.
const REPORTING: &[&str] = &[
    "said",
    "says",
    "claimed",
    "claims",
    "called",
    "calls",
    "listed",
    "lists",
    "described",
    "describes",
    "reported",
    "reports",
    "stated",
    "states",
    "wrote",
    "writes",
    "thought",
    "assumed",
    "believed",
    "suggested",
    "implied",
    "counted",
    "treated",
];

/// The modality of the token at `i`, inside the clause `[cs, i]`, and whether it is
/// negated and in the past tense.
pub fn modality(toks: &[Tok], cs: usize, i: usize, question: bool) -> (Modality, bool, bool) {
    if toks[i].quoted {
        return (Modality::Quoted, false, false);
    }
    if question {
        return (Modality::Question, false, false);
    }
    // The span the token belongs to: back to the clause start or the last comma that
    // does not sit inside a list of references.
    let mut span = cs;
    for k in (cs..i).rev() {
        let t = &toks[k];
        if t.is_punct(",") || t.is_punct("—") || t.is_punct("–") || t.is_punct(":") {
            let next_is_ref = toks.get(k + 1).is_some_and(|n| matches!(n.kind, TokKind::Ref(_)));
            let prev_is_ref = k > 0 && matches!(toks[k - 1].kind, TokKind::Ref(_));
            let in_list = t.is_punct(",") && (next_is_ref || prev_is_ref);
            if !in_list {
                span = k + 1;
                break;
            }
        }
    }
    let words: Vec<&Tok> = toks[span..i].iter().filter(|t| t.kind == TokKind::Word).collect();
    // `v2 called #5 merged`, `the first pass listed #5 as open`: reported words.
    if toks[cs..i].iter().any(|t| t.kind == TokKind::Word && REPORTING.contains(&t.lower.as_str())) {
        return (Modality::Quoted, false, false);
    }
    // Negation and modals: close to the word (within three words).
    let near: Vec<&&Tok> = words.iter().rev().take(3).collect();
    let negated = near
        .iter()
        .any(|t| NEGATORS.contains(&t.lower.as_str()) || t.lower.ends_with("n't") || t.lower.ends_with("n’t"))
        || words.windows(2).rev().take(3).any(|w| w[0].is("no") && w[1].is("longer"));
    let past = near.iter().any(|t| PAST_MARKERS.contains(&t.lower.as_str()));
    if near.iter().any(|t| MODALS.contains(&t.lower.as_str()) || t.lower.ends_with("'ll") || t.lower.ends_with("’ll"))
    {
        return (Modality::Future, negated, past);
    }
    for (k, w) in words.iter().enumerate() {
        if SUBORDINATORS.contains(&w.lower.as_str()) || (w.is("in") && words.get(k + 1).is_some_and(|n| n.is("case"))) {
            return (Modality::Conditional, negated, past);
        }
        let as_soon_as = w.is("as") && words.get(k + 1).is_some_and(|n| n.is("soon"));
        if TEMPORAL.contains(&w.lower.as_str()) || as_soon_as {
            // `once X is merged` is a condition; `after X was merged` / `when X merged`
            // state a fact.
            let rest = &words[k + 1..];
            if rest.iter().any(|t| PRESENT_AUX.contains(&t.lower.as_str())) {
                return (Modality::Conditional, negated, past);
            }
        }
    }
    (Modality::Asserted, negated, past)
}

/// Index of the parenthesis matching the `)` at `close`, searching backwards.
pub fn open_paren(toks: &[Tok], close: usize) -> Option<usize> {
    let mut level = 0i32;
    for k in (0..=close).rev() {
        if toks[k].is_punct(")") || toks[k].is_punct("]") {
            level += 1;
        } else if toks[k].is_punct("(") || toks[k].is_punct("[") {
            level -= 1;
            if level == 0 {
                return Some(k);
            }
        }
    }
    None
}

/// Index of the parenthesis matching the `(` at `open`, searching forwards.
pub fn close_paren(toks: &[Tok], open: usize) -> Option<usize> {
    let mut level = 0i32;
    for (k, t) in toks.iter().enumerate().skip(open) {
        if t.is_punct("(") || t.is_punct("[") {
            level += 1;
        } else if t.is_punct(")") || t.is_punct("]") {
            level -= 1;
            if level == 0 {
                return Some(k);
            }
        }
    }
    None
}

/// Byte ranges of the cells of a table row (`|` inside code spans and `\|` do not split).
pub fn cell_ranges(line: &str) -> Vec<(usize, usize)> {
    let code = crate::report::code_spans(line);
    let b = line.as_bytes();
    let mut seps: Vec<usize> = Vec::new();
    for (i, &c) in b.iter().enumerate() {
        if c == b'|' && (i == 0 || b[i - 1] != b'\\') && !code.iter().any(|(a, e)| i > *a && i < *e) {
            seps.push(i);
        }
    }
    let trimmed_start = line.len() - line.trim_start().len();
    let mut out = Vec::new();
    let mut prev = None;
    for s in seps {
        match prev {
            None => {
                if line[trimmed_start..s].trim().is_empty() {
                    prev = Some(s);
                    continue;
                }
                out.push((trimmed_start, s));
            }
            Some(p) => out.push((p + 1, s)),
        }
        prev = Some(s);
    }
    if let Some(p) = prev {
        if !line[p + 1..].trim().is_empty() {
            out.push((p + 1, line.len()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        tokenize(line, &[], true).into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn tokens() {
        assert_eq!(
            words("**MERGED** 2026-05-10 18:09:46Z (author-closed); `merged` /hold'd."),
            vec!["MERGED", "2026-05-10", "18:09:46Z", "(", "author-closed", ")", ";", "`merged`", "/hold'd", "."]
        );
        let t = tokenize("said \"k merged\" ~~OPEN~~ then", &[], true);
        let q: Vec<(&str, bool)> = t.iter().map(|x| (x.text.as_str(), x.quoted)).collect();
        assert!(q.contains(&("merged", true)) && q.contains(&("OPEN", true)) && q.contains(&("then", false)));
        let u = tokenize("see https://prow.k8s.io/view/gs/b/logs/merged/1 ok", &[], true);
        assert_eq!(u[1].kind, TokKind::Url);
        assert_eq!(tokenize("✅ MERGED", &[], true)[0].kind, TokKind::Emoji);
    }

    #[test]
    fn modalities() {
        let m = |s: &str, w: &str| {
            let t = tokenize(s, &[], true);
            let i = t.iter().position(|x| x.text == w).unwrap();
            let cl = clauses(&t);
            let (cs, _, q) = cl.iter().copied().find(|(a, b, _)| i >= *a && i < *b).unwrap();
            modality(&t, cs, i, q)
        };
        assert_eq!(m("moot once X is merged", "merged").0, Modality::Conditional);
        assert_eq!(m("If X gets merged, Y is OPEN", "merged").0, Modality::Conditional);
        assert_eq!(m("If X gets merged, Y is OPEN", "OPEN").0, Modality::Asserted);
        assert_eq!(m("after X was merged the job passed", "merged"), (Modality::Asserted, false, true));
        assert_eq!(m("X will be merged", "merged").0, Modality::Future);
        assert_eq!(m("X still needs to be merged", "merged").0, Modality::Future);
        assert_eq!(m("X was not merged", "merged"), (Modality::Asserted, true, true));
        assert_eq!(m("X isn't merged yet", "merged"), (Modality::Asserted, true, false));
        assert_eq!(m("Is X merged?", "merged").0, Modality::Question);
        assert_eq!(m("they said \"X merged\"", "merged").0, Modality::Quoted);
        assert_eq!(m("v2 called X merged", "merged").0, Modality::Quoted);
    }

    #[test]
    fn cells() {
        let l = "| 1.1 | do `a|b` \\| c | OPEN |";
        let c: Vec<&str> = cell_ranges(l).iter().map(|(a, b)| l[*a..*b].trim()).collect();
        assert_eq!(c, vec!["1.1", "do `a|b` \\| c", "OPEN"]);
    }
}
