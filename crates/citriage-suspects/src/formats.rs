//! Format strings a diff adds, matched against the rendered lines of a failure.
//!
//! A change that adds `fmt.Errorf("actual throughput %f lower than threshold %f", …)`
//! never shows that text verbatim in a log: the log says `actual throughput 23
//! lower than threshold 90`. A string literal of an added line holding a verb
//! (Go / C / Python `%s %d %v %q %f %.2f %-5s`, Python and Rust `{}` `{name}`
//! `{:.2f}`, shell `$VAR` `${VAR}`) is cut at its verbs into literal pieces; it
//! renders a failure line when its pieces appear in the line in order, each long
//! enough to say something, and together they cover enough of the line.

use std::sync::OnceLock;

use regex::Regex;

/// A literal piece shorter than this (after trimming) is a connector (`: `, ` (`,
/// `=`): it is neither required nor counted.
pub const MIN_PIECE: usize = 4;
/// The pieces together carry at least this many letters.
pub const MIN_LETTERS: usize = 16;
/// The pieces together cover at least this share of the failure line (percent).
pub const MIN_COVER_PERCENT: usize = 40;
/// A rendered value between two pieces is at most this long.
const MAX_GAP: usize = 200;
/// At most this many format strings are kept of one change.
pub const MAX_PER_CHANGE: usize = 4000;

/// A string literal of an added line that holds at least one verb.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatString {
    /// The literal as the diff writes it (without its quotes).
    pub text: String,
    /// Its literal pieces between verbs, in order, trimmed; connectors left out.
    pub pieces: Vec<String>,
}

impl FormatString {
    /// Letters of its pieces.
    pub fn letters(&self) -> usize {
        self.pieces.iter().map(|p| p.chars().filter(|c| c.is_ascii_alphabetic()).count()).sum()
    }

    /// Characters of its pieces.
    pub fn covered(&self) -> usize {
        self.pieces.iter().map(String::len).sum()
    }

    /// True when the line is a rendering of this format: every piece in order,
    /// something between two pieces (at most a long value), and the pieces
    /// covering enough of the message they are in: the line's part between the
    /// `: ` separators around them (an error wrapped in others is still found).
    pub fn renders(&self, line: &str) -> bool {
        let line = line.trim();
        if self.covered() > line.len() {
            return false;
        }
        let mut at = 0;
        let mut first = None;
        for (i, p) in self.pieces.iter().enumerate() {
            let Some(found) = line[at..].find(p.as_str()) else { return false };
            if i > 0 && (found == 0 || found > MAX_GAP) {
                return false;
            }
            first.get_or_insert(at + found);
            at += found + p.len();
        }
        let start = first.and_then(|f| line[..f].rfind(": ").map(|s| s + 2)).unwrap_or(0);
        let end = line[at..].find(": ").map(|e| at + e).unwrap_or(line.len());
        self.covered() * 100 >= (end - start) * MIN_COVER_PERCENT
    }
}

fn verb() -> &'static Regex {
    static VERB: OnceLock<Regex> = OnceLock::new();
    VERB.get_or_init(|| {
        Regex::new(concat!(
            r"%[-+# 0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|z|j|L)?[sdvqfgGeExXtTpwcbouiU]",
            r"|\{[A-Za-z0-9_.!:?<>^#+\-\[\]]{0,40}\}",
            r"|\$\{[A-Za-z0-9_:#%/\-]{1,60}\}|\$[A-Za-z_][A-Za-z0-9_]*",
            r"|\\[ntr]",
        ))
        .expect("built-in pattern")
    })
}

/// The format strings of an added line of this file (single quotes are strings
/// only in scripting languages).
pub fn format_strings(file: &str, line: &str) -> Vec<FormatString> {
    let ext = file.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    let single = matches!(ext, "py" | "sh" | "bash" | "js" | "ts" | "rb" | "pl");
    literals(line, single).into_iter().filter_map(|lit| of_literal(&lit)).collect()
}

/// The format of one literal, when it holds a verb and pieces enough to say something.
fn of_literal(lit: &str) -> Option<FormatString> {
    let text = lit.replace("%%", "\u{1}");
    let re = verb();
    if !re.find_iter(&text).any(|m| !m.as_str().starts_with('\\')) {
        return None;
    }
    let pieces: Vec<String> = re
        .split(&text)
        .map(|p| p.replace('\u{1}', "%").replace("\\\"", "\"").replace("\\\\", "\\").trim().to_string())
        .filter(|p| p.len() >= MIN_PIECE && p.chars().filter(|c| c.is_ascii_alphabetic()).count() >= 2)
        .collect();
    let f = FormatString { text: lit.to_string(), pieces };
    (!f.pieces.is_empty() && f.letters() >= MIN_LETTERS && f.words() >= 3).then_some(f)
}

impl FormatString {
    /// Words of its pieces.
    fn words(&self) -> usize {
        self.pieces.iter().map(|p| p.split_whitespace().count()).sum()
    }
}

/// The string literals of a line: double quotes and backticks (and single
/// quotes when asked), escapes kept as written.
fn literals(line: &str, single: bool) -> Vec<String> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let q = b[i];
        if !(q == b'"' || q == b'`' || (single && q == b'\'')) {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut j = start;
        while j < b.len() && b[j] != q {
            j += if b[j] == b'\\' && q != b'`' { 2 } else { 1 };
        }
        if j >= b.len() {
            break;
        }
        out.push(line[start..j].to_string());
        i = j + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(file: &str, line: &str) -> FormatString {
        let mut f = format_strings(file, line);
        assert_eq!(f.len(), 1, "{line}: {f:?}");
        f.remove(0)
    }

    #[test]
    fn go_verbs_match_a_rendered_line_by_their_pieces() {
        let f = one(
            "clusterloader2/pkg/measurement/throughput.go",
            r#"		return fmt.Errorf("actual throughput %f lower than threshold %f", actual, threshold)"#,
        );
        assert_eq!(f.pieces, vec!["actual throughput", "lower than threshold"]);
        assert!(f.renders("actual throughput 23.000000 lower than threshold 90.000000"));
        // Pieces out of order, missing, or nothing rendered between them.
        assert!(!f.renders("lower than threshold 90 actual throughput 23"));
        assert!(!f.renders("actual throughput 23 higher than threshold 90"));
        assert!(!f.renders("actual throughputlower than threshold 90"));
        // A message the pieces cover too little of; an error wrapped in others is found.
        let long = format!("actual throughput 23 lower than threshold 90 {}", "and then a great deal more ".repeat(8));
        assert!(!f.renders(&long));
        assert!(f.renders("measurement failed: actual throughput 23 lower than threshold 90: see the report"));
    }

    #[test]
    fn python_shell_and_printf_verbs() {
        let f =
            one("hack/check.py", r#"    raise Exception(f"pod {name} restarted {count:d} times in namespace {ns}")"#);
        assert_eq!(f.pieces, vec!["restarted", "times in namespace"]);
        assert!(f.renders("pod web-0 restarted 7 times in namespace kube-system"));
        let f =
            one("hack/e2e.sh", r#"  echo "timed out after ${TIMEOUT} seconds waiting for $CLUSTER_NAME to be ready""#);
        assert!(f.renders("timed out after 600 seconds waiting for e2e-abc to be ready"), "{f:?}");
        let f = one("tools/report.go", r#"	log.Printf("only %.2f%% of nodes became ready within %v", pct, d)"#);
        assert!(f.renders("only 41.50% of nodes became ready within 5m0s"), "{f:?}");
    }

    #[test]
    fn strings_without_verbs_or_without_enough_text_are_no_formats() {
        assert!(format_strings("a.go", r#"	return errors.New("cohort borrowing limit exceeded")"#).is_empty());
        assert!(format_strings("a.go", r#"	return fmt.Errorf("%s: %v", key, err)"#).is_empty());
        assert!(format_strings("a.go", r#"	return fmt.Errorf("failed %s: %w", key, err)"#).is_empty());
        // Single quotes are runes in Go.
        assert!(format_strings("a.go", r#"	c := '%'; d := '%'"#).is_empty());
    }
}
