//! The shape of failure lines, whatever the system's vocabulary.
//!
//! * **The words of a line.** A failure word inside an identifier, a path, a flag, a
//!   `key=value` argument, a quoted string or a literal argument list (`error_list`,
//!   `ignore_errors=True`, `--fail-fast`, `errors.go`, `{'level': 'error'}`) does not say
//!   that something failed. [`words_view`] blanks those tokens so that the markers that
//!   look for bare failure words only see the line's own words.
//! * **Status-token verdicts.** Test harnesses print one line per result: an upper-case
//!   status token, a separator, a subject and usually a message (`FAIL: a/b.ll (4 of
//!   90)`, `CHECK-UNEXPECTED-FAIL | a.html | expected 1`, `RUNNER-CRASH | …`), or a
//!   subject padded to a status column (`//net:x_test    FAILED in 2.1s`, `#3: x
//!   ....***Failed  1.3 sec`). [`status_verdict`] reads the shape and the token's parts:
//!   a part that names a failure (fail, error, crash, timeout, abort, panic, leak, killed,
//!   unexpected …) makes it a verdict unless another part says the result was expected
//!   (`EXPECTED`, `KNOWN`, `XFAIL`, `SKIP`, `TODO`, `PASS`, `INFO` …). No list of one
//!   system's tokens.
//! * **Banners.** A line of `=`, `*`, `#`, `~` or `+` around one word is a section title
//!   (`==== FAILURES ====`) unless the word is an event (`+++ Timeout +++`).

use regex::Regex;
use std::sync::LazyLock;

/// Token parts that name a failed result.
const FAILING: &[&str] = &[
    "FAIL",
    "FAILED",
    "FAILS",
    "FAILURE",
    "FAILURES",
    "FAILING",
    "ERROR",
    "ERRORS",
    "ERRORED",
    "CRASH",
    "CRASHED",
    "CRASHES",
    "TIMEOUT",
    "TIMEDOUT",
    "ABORT",
    "ABORTED",
    "PANIC",
    "PANICKED",
    "FATAL",
    "LEAK",
    "LEAKED",
    "LEAKS",
    "KILLED",
    "BROKEN",
    "UNRESOLVED",
    "UNEXPECTED",
    "XPASS",
    "ASSERT",
    "ASSERTION",
];

/// Token parts that say the result was expected, or is no result.
const BENIGN: &[&str] = &[
    "EXPECTED",
    "KNOWN",
    "XFAIL",
    "KFAIL",
    "SKIP",
    "SKIPPED",
    "TODO",
    "PASS",
    "PASSED",
    "OK",
    "INFO",
    "DEBUG",
    "TRACE",
    "WARN",
    "WARNING",
    "START",
    "STARTED",
    "END",
    "BEGIN",
    "NOTE",
    "STATUS",
    "UNSUPPORTED",
    "FLAKY",
    "RETRY",
    "IGNORED",
];

/// How a status token reads: `None` if it names no failure.
fn token_strength(token: &str) -> Option<u8> {
    let up = token.trim_start_matches('*').to_ascii_uppercase();
    let parts: Vec<&str> = up.split(['-', '_']).filter(|p| !p.is_empty()).collect();
    if parts.is_empty() || parts.iter().any(|p| BENIGN.contains(p)) && !parts.contains(&"UNEXPECTED") {
        return None;
    }
    if !parts.iter().any(|p| FAILING.contains(p)) {
        return None;
    }
    // A bare `ERROR` is a log level: a logged error, not a result.
    if parts.len() == 1 && matches!(parts[0], "ERROR" | "ERRORS") {
        return Some(2);
    }
    Some(3)
}

/// What a status-token line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// A failed result: 3, or 2 for a bare `ERROR` level with a subject.
    Failed(u8),
    /// A result that is no failure, or an expected one (`PASS:`, `XFAIL:`, `CHECK-KNOWN-FAIL |`).
    Benign,
}

/// What a line's status token says, if the line has the shape of a status line.
pub(crate) fn status(text: &str) -> Option<Status> {
    let t = text.trim_start();
    let lead = LEAD.captures(t).and_then(|c| c.get(1)).map(|m| m.as_str());
    if let Some(tok) = lead {
        return Some(match token_strength(tok) {
            Some(s) => Status::Failed(s),
            None => Status::Benign,
        });
    }
    status_verdict(text).map(Status::Failed)
}

static LEAD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*(?:[\[(]?[\w:./+-]*\d[\w:./+-]*[\])]?\s+){0,3}([A-Z][A-Z0-9]*(?:[-_][A-Z0-9]+)*)(?:\s*\|\s*|\s*::\s*|:\s+|\s+-\s+|\s+[\w.\-/\[\]]+:\s+)\S",
    )
    .expect("valid status regex")
});

/// The strength of a status-token verdict line (3: a failed result; 2: a bare `ERROR`
/// level with a subject), or `None`.
pub(crate) fn status_verdict(text: &str) -> Option<u8> {
    // Leading status: up to three prefix tokens holding a digit (timestamps, ids), the
    // token, a separator, a subject.
    // Trailing status column: a subject, padding (two spaces or dots), the token, an
    // optional duration.
    static TAIL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^\s*\S.*?(?:\s{2,}|\.{3,}\s*)(?:\*{3})?([A-Za-z]+(?:[-_][A-Za-z]+)*)(?:\s+(?:in\s+)?[\d.]+\s*(?:s|ms|sec|secs|seconds)?)?\s*$",
        )
        .expect("valid status regex")
    });
    if let Some(c) = LEAD.captures(text) {
        if let Some(s) = c.get(1).and_then(|m| token_strength(m.as_str())) {
            return Some(s);
        }
    }
    let c = TAIL.captures(text)?;
    let tok = c.get(1)?.as_str();
    // A status column is written in capitals or capitalised (`FAILED`, `***Failed`).
    let capital = tok.chars().next().is_some_and(|ch| ch.is_ascii_uppercase());
    if !capital {
        return None;
    }
    token_strength(tok).map(|_| 3)
}

/// What a banner line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Banner {
    /// A section title (`==== FAILURES ====`): boilerplate.
    Section,
    /// An event (`+++ Timeout +++`, `*** CRASH ***`): a failure.
    Event,
}

/// Whether a line is a banner around one word, and which kind.
pub(crate) fn banner(text: &str) -> Option<Banner> {
    let t = text.trim();
    let c = t.chars().next().filter(|c| "=*#~+".contains(*c))?;
    let inner = t.trim_start_matches(c);
    let lead = t.len() - inner.len();
    let word = inner.trim_end_matches(c);
    let trail = inner.len() - word.len();
    let word = word.trim();
    if lead < 3 || trail < 3 || word.is_empty() || !word.chars().all(|ch| ch.is_ascii_alphabetic()) {
        return None;
    }
    let word = word.to_ascii_uppercase();
    let event = matches!(word.as_str(), "TIMEOUT" | "TIMEDOUT" | "CRASH" | "CRASHED" | "ABORT" | "ABORTED" | "KILLED");
    Some(if event { Banner::Event } else { Banner::Section })
}

/// The line with identifier-like tokens, flags, `key=value` arguments, quoted strings
/// and literal argument lists blanked (same length), or `None` when nothing was.
pub(crate) fn words_view(text: &str) -> Option<String> {
    let mut out: Vec<u8> = text.as_bytes().to_vec();
    let mut changed = false;
    let mut blank = |a: usize, b: usize, out: &mut Vec<u8>| {
        for x in out.iter_mut().take(b).skip(a) {
            *x = b' ';
        }
        changed = true;
    };
    // Literal argument lists: a bracket group holding quoted items and separators.
    for (a, b) in literal_groups(text) {
        blank(a, b, &mut out);
    }
    // Quoted strings.
    for (a, b) in quoted(text) {
        blank(a, b, &mut out);
    }
    // Identifier-like tokens.
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let tok = &text[start..i];
        let core = tok
            .trim_matches(|c: char| matches!(c, '(' | ')' | '[' | ']' | '{' | '}' | ',' | ';' | ':' | '.' | '!' | '?'));
        if identifier_like(core) {
            blank(start, i, &mut out);
        }
    }
    if !changed {
        return None;
    }
    String::from_utf8(out).ok()
}

/// A token that names something rather than saying something: a flag, `key=value`, a
/// path, `snake_case`, `dotted.name`, `camelCase`.
fn identifier_like(tok: &str) -> bool {
    if tok.len() < 2 || !tok.chars().any(|c| c.is_ascii_alphabetic()) {
        return false;
    }
    let b = tok.as_bytes();
    let flag = tok.starts_with('-') && b.get(1).is_some_and(|c| c.is_ascii_alphabetic() || *c == b'-');
    let inner = |c: u8| {
        b.windows(3)
            .any(|w| w[1] == c && w[0].is_ascii_alphanumeric() && (w[2].is_ascii_alphanumeric() || w[2] == b'_'))
    };
    let camel = b.windows(2).any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    flag || tok.contains('=') || tok.contains('/') || tok.contains('_') || inner(b'.') || camel
}

/// Byte ranges of quoted strings (`'…'`, `"…"`) that stand as tokens.
fn quoted(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let q = b[i];
        let opens = (q == b'\'' || q == b'"') && (i == 0 || !b[i - 1].is_ascii_alphanumeric());
        if opens {
            if let Some(len) = b[i + 1..].iter().position(|&c| c == q) {
                let end = i + 1 + len + 1;
                let closes = end >= b.len() || !b[end].is_ascii_alphanumeric();
                if closes {
                    out.push((i, end));
                    i = end;
                    continue;
                }
            }
        }
        i += 1;
    }
    out
}

/// Byte ranges of bracket groups that hold a literal list or map: quoted items with
/// commas or colons (`{'error_list': [...]}`, `(['git', 'fetch'],)`).
fn literal_groups(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut stack: Vec<usize> = Vec::new();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'(' | b'[' | b'{' => stack.push(i),
            b')' | b']' | b'}' => {
                if let Some(a) = stack.pop() {
                    let inner = &text[a + 1..i];
                    let literal =
                        (inner.contains('\'') || inner.contains('"')) && (inner.contains(',') || inner.contains(':'));
                    if literal && stack.is_empty() {
                        out.push((a, i + 1));
                    } else if literal {
                        // an inner group of a larger literal: the outer one decides
                        out.push((a, i + 1));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_inside_names_are_blanked() {
        let w = |t: &str| words_view(t).unwrap_or_else(|| t.to_string());
        assert!(!w("kwargs: {'error_list': [{'substr': 'command not found'}]}").contains("error"));
        assert!(!w("setup.cfg (ignore_errors=True for mypy)").contains("error"));
        assert!(!w("+ ./run.sh --fail-fast --retries=3").contains("fail"));
        assert!(!w("Building CXX object src/error_handler.cc.o").contains("error"));
        assert!(!w("[30 / 40] Compiling server/error_page.cc; 0s").contains("error"));
        assert!(!w("TestValidateErrorList passed").contains("Error"));
        assert!(w("error: could not connect to server").contains("error"));
        assert!(w("Connection refused: 'db' not found").contains("not found"));
        let v = w("FAILED tests/test_a.py::test_b - AssertionError: assert 1 == 2");
        assert!(v.starts_with("FAILED ") && !v.contains("test_a") && v.contains("assert 1 == 2"), "{v}");
    }

    #[test]
    fn status_tokens_by_shape() {
        for (line, want) in [
            ("FAIL: Toolkit :: Transforms/x.ll (4 of 5210)", Some(3)),
            ("XFAIL: Toolkit :: CodeGen/fail-on-x.ll (2 of 5210)", None),
            ("PASS: gcc.dg/error-recovery-1.c (test for excess errors)", None),
            ("CHECK-UNEXPECTED-FAIL | ui/a.html | selection anchor: expected 12, got 0", Some(3)),
            ("CHECK-KNOWN-FAIL | ui/b.html | tracked", None),
            ("RUNNER-CRASH | ui/c.html | renderer process died", Some(3)),
            ("CHECK-UNEXPECTED-TIMEOUT | ui/c.html | no result after 90s", Some(3)),
            ("CHECK-PASS | ui/d.html | took 150ms", None),
            ("TIMEOUT: //net:dns_resolver_test (Summary)", Some(3)),
            ("2026-05-10 13:02:12 ERROR harness: browser process exited", Some(2)),
            ("//net:socket_test                                 FAILED in 2.1s", Some(3)),
            ("//base:error_codes_test                           PASSED in 0.4s", None),
            ("  3/4 Test  #3: journal_replay_test ..............***Failed    1.30 sec", Some(3)),
            ("  1/4 Test  #1: error_format_test ................   Passed    0.02 sec", None),
            ("INFO: Found 36 targets and 12 test targets...", None),
            ("Running with job runner 16.11.0", None),
        ] {
            assert_eq!(status_verdict(line), want, "{line}");
        }
    }

    #[test]
    fn banners() {
        assert_eq!(
            banner("=================================== FAILURES ==================================="),
            Some(Banner::Section)
        );
        assert_eq!(
            banner("+++++++++++++++++++++++++++++++++++ Timeout ++++++++++++++++++++++++++++++++++++"),
            Some(Banner::Event)
        );
        assert_eq!(banner("____________ test_parse_duration ____________"), None);
        assert_eq!(banner("========================= 1 failed, 40 passed in 2.31s ========================="), None);
    }
}
