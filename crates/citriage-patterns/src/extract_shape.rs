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

/// Words a failed status token is made of, for a line-wide prefilter: a line without any
/// has no failed status column.
pub(crate) const FAILURE_NAMES: &str =
    r"(?i)fail|err|crash|time[ d]?out|abort|panic|fatal|leak|killed|broken|unresolved|unexpected|xpass|assert";

/// What a line's status token says, if the line has the shape of a status line.
/// `names`: the line matches [`FAILURE_NAMES`].
pub(crate) fn status(text: &str, names: bool) -> Option<Status> {
    if let Some(tok) = lead_token(text) {
        return Some(match token_strength(tok) {
            Some(s) => Status::Failed(s),
            None => Status::Benign,
        });
    }
    if !names {
        return None;
    }
    tail_token(text).and_then(token_strength).map(|_| Status::Failed(3))
}

/// A leading status token: after at most three prefix tokens holding a digit
/// (timestamps, ids), an upper-case token (`FAIL`, `CHECK-UNEXPECTED-FAIL`), then a
/// separator (`|`, `::`, `: `, ` - `, or a component and a colon) and a subject.
fn lead_token(text: &str) -> Option<&str> {
    let mut rest = text.trim_start();
    for _ in 0..3 {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let chunk = rest[..end].trim_start_matches(['[', '(']).trim_end_matches([']', ')']);
        let prefix = chunk.bytes().any(|b| b.is_ascii_digit())
            && chunk.bytes().all(|b| b.is_ascii_alphanumeric() || b"_:./+-".contains(&b));
        if !prefix || end == rest.len() {
            break;
        }
        rest = rest[end..].trim_start();
    }
    let b = rest.as_bytes();
    if !b.first().is_some_and(u8::is_ascii_uppercase) {
        return None;
    }
    let mut end = 0;
    while end < b.len() {
        let c = b[end];
        let joiner =
            (c == b'-' || c == b'_') && b.get(end + 1).is_some_and(|n| n.is_ascii_uppercase() || n.is_ascii_digit());
        if c.is_ascii_uppercase() || c.is_ascii_digit() || joiner {
            end += 1;
        } else {
            break;
        }
    }
    let (tok, after) = rest.split_at(end);
    let subject = |s: &str| !s.trim_start().is_empty();
    let t = after.trim_start();
    let separated = if let Some(r) = t.strip_prefix("::") {
        subject(r)
    } else if let Some(r) = t.strip_prefix('|') {
        subject(r)
    } else if let Some(r) = after.strip_prefix(':') {
        r.starts_with(char::is_whitespace) && subject(r)
    } else if after.starts_with(char::is_whitespace) {
        if let Some(r) = t.strip_prefix("- ") {
            subject(r)
        } else {
            // `LEVEL component: message`
            let word_end = t.find(|c: char| !(c.is_alphanumeric() || "_.-/[]".contains(c))).unwrap_or(t.len());
            word_end > 0
                && t[word_end..].strip_prefix(':').is_some_and(|r| r.starts_with(char::is_whitespace) && subject(r))
        }
    } else {
        false
    };
    separated.then_some(tok)
}

/// A trailing status column: a subject, padding (two spaces, a tab or three dots), an
/// optional `***`, the token written in capitals or capitalised (`FAILED`, `***Failed`),
/// and an optional duration (`in 2.1s`, `1.30 sec`).
fn tail_token(text: &str) -> Option<&str> {
    let numeric = |w: &str| {
        let n = w.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit() || b == b'.') && n.bytes().any(|b| b.is_ascii_digit())
    };
    let last_word = |s: &str| s.rfind(char::is_whitespace).map_or(0, |i| i + 1);
    let mut s = text.trim_end();
    let a = last_word(s);
    if a > 0 && matches!(&s[a..], "s" | "ms" | "sec" | "secs" | "seconds") {
        let head = s[..a].trim_end();
        let b = last_word(head);
        if numeric(&head[b..]) {
            s = head[..b].trim_end();
        }
    } else if a > 0 && numeric(&s[a..]) {
        s = s[..a].trim_end();
    }
    let a = last_word(s);
    if a > 0 && &s[a..] == "in" {
        s = s[..a].trim_end();
    }
    // the token: letters joined by `-` or `_`, after an optional `***`
    let start = s.rfind(|c: char| !(c.is_ascii_alphabetic() || c == '-' || c == '_')).map_or(0, |i| i + 1);
    let tok = s[start..].trim_matches(['-', '_']);
    if tok.is_empty() || !tok.starts_with(|c: char| c.is_ascii_uppercase()) {
        return None;
    }
    let before = s[..start].strip_suffix("***").unwrap_or(&s[..start]);
    let padded = before.ends_with("  ") || before.ends_with('\t') || before.trim_end().ends_with("...");
    let subject = !before.trim().trim_end_matches('.').trim().is_empty();
    (padded && subject).then_some(tok)
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

    /// The strength of a status-token verdict line (3: a failed result; 2: a bare `ERROR`
    /// level with a subject), or `None`.
    fn status_verdict(text: &str) -> Option<u8> {
        let names = regex::Regex::new(FAILURE_NAMES).expect("valid names");
        match status(text, names.is_match(text)) {
            Some(Status::Failed(s)) => Some(s),
            _ => None,
        }
    }

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
