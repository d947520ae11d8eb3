//! What a revert's message quotes of the failure it fixes, by one fixed rule (no
//! weights, nothing learned), for the real-history evaluation of the suspect engine
//! (`suspects_history`):
//!
//! 1. **The revert's own words.** The subject's tail after the quoted title of the
//!    reverted commit (`Revert "TITLE" because …`: `because …`), and the body without
//!    the lines git writes (`This reverts commit X.`, `changes made to Y.`), trailers
//!    (`Signed-off-by:` and other `Word-by:`, `Change-Id:`), bullets of squashed
//!    commits that are themselves reverts, and separator lines.
//! 2. **Nothing that names the culprit.** The reverted commit's title (wherever it is
//!    quoted), pull request numbers (`#123`), URLs and commit ids (7 to 40 hex digits
//!    with a digit and a letter) are blanked out of every kept line.
//! 3. **A line is failure text** when it holds one of: a Go test name (`TestX`,
//!    `TestX/sub`), an e2e test name (`[sig-x] …`), a CI job name (`pull-…`, `ci-…`,
//!    `periodic-…`, `post-…` with three parts at least), a quoted string (in backticks
//!    or double quotes, four characters at least), an error word (`error`, `fail…`,
//!    `panic`, `fatal`, `cannot`, `can't`, `unable to`, `not found`, `timed out`,
//!    `timeout`, `OOM…`, `broke…`, `break…`, `crash…`, `flak…`), or it is a log excerpt
//!    (inside a ``` fence, or indented by a tab or four spaces).
//!
//! A revert with no such line has no quotable failure text: it is skipped and counted.

use std::sync::OnceLock;

use regex::Regex;
use serde::Serialize;

/// The failure a revert's message quotes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Quoted {
    /// The failure-text lines (blanked as the rule says), in message order, distinct.
    pub lines: Vec<String>,
    /// The test names among them (Go tests, e2e tests), sorted, distinct.
    pub tests: Vec<String>,
}

impl Quoted {
    /// True when the message quotes nothing of a failure.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }
}

/// The commit ids a revert's body names (`This reverts commit X`), in order, distinct,
/// lowercased (7 to 64 hex digits).
pub fn reverted_ids(body: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in re(&RE_REVERTS, r"(?i)This reverts commit ([0-9a-f]{7,64})\b").captures_iter(body) {
        let id = c[1].to_ascii_lowercase();
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

/// True when the revert puts back what an earlier revert took out (`Revert "Revert …"`,
/// `Reapply "…"`): its message says why the change is safe again, not what failed.
pub fn reapplies(subject: &str) -> bool {
    let s = subject.trim_start();
    s.starts_with("Revert \"Revert") || s.starts_with("Reapply")
}

/// The failure text of a revert's message, by the module's rule. `reverted_title` is
/// the reverted commit's subject, blanked wherever the message quotes it.
pub fn quoted_failure(subject: &str, body: &str, reverted_title: Option<&str>) -> Quoted {
    let mut kept: Vec<(String, bool)> = Vec::new();
    if let Some(tail) = subject_tail(subject) {
        kept.push((tail, false));
    }
    let mut fenced = false;
    for raw in body.lines() {
        if raw.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if git_written(raw) {
            continue;
        }
        let log = fenced || raw.starts_with('\t') || raw.starts_with("    ");
        kept.push((raw.to_string(), log));
    }
    let mut out = Quoted::default();
    let mut tests = std::collections::BTreeSet::new();
    for (line, log) in kept {
        let clean = blank(&line, reverted_title);
        let text = clean.trim();
        if text.chars().filter(|c| c.is_alphanumeric()).count() < 4 {
            continue;
        }
        let found = test_names(text);
        let is_failure = log || !found.is_empty() || names_job(text) || quotes(text) || error_word(text);
        tests.extend(found);
        if is_failure && !out.lines.iter().any(|l| l == text) {
            out.lines.push(text.to_string());
        }
    }
    out.tests = tests.into_iter().collect();
    out
}

/// The subject's words after the quoted title of a `Revert "…"` subject, if any.
fn subject_tail(subject: &str) -> Option<String> {
    let s = subject.trim();
    let rest = s.strip_prefix("Revert \"")?;
    let close = rest.rfind('"')?;
    let tail = rest[close + 1..].trim();
    (!tail.is_empty()).then(|| tail.to_string())
}

/// Lines git or the review tooling writes, never the author's account of the failure.
fn git_written(line: &str) -> bool {
    let t = line.trim_start_matches([' ', '\t', '*', '-']).trim();
    let lower = t.to_ascii_lowercase();
    lower.starts_with("this reverts commit")
        || lower.starts_with("changes made to ")
        || lower.starts_with("revert \"")
        || lower.starts_with("change-id:")
        || lower.starts_with("reviewed-on:")
        || t.chars().all(|c| c == '-' || c == '=' || c == '*')
        || re(&RE_TRAILER, r"^[A-Za-z][A-Za-z-]*-by:").is_match(t)
}

/// The line with the reverted title, pull request numbers, URLs and commit ids blanked.
fn blank(line: &str, reverted_title: Option<&str>) -> String {
    let mut s = line.to_string();
    if let Some(t) = reverted_title.map(str::trim).filter(|t| t.len() >= 4) {
        s = s.replace(t, " ");
    }
    let s = re(&RE_URL, r"https?://\S+").replace_all(&s, " ");
    let s = re(&RE_PR, r"#[0-9]+\b").replace_all(&s, " ");
    let s = re(&RE_SHA, r"\b[0-9a-f]{7,40}\b").replace_all(&s, |c: &regex::Captures| {
        let h = &c[0];
        if h.bytes().any(|b| b.is_ascii_digit()) && h.bytes().any(|b| b.is_ascii_alphabetic()) {
            " ".to_string()
        } else {
            h.to_string()
        }
    });
    s.into_owned()
}

/// Go test names (`TestX`, `TestX/sub`) and e2e test names (`[sig-x] …` to the line's end).
fn test_names(text: &str) -> Vec<String> {
    let mut out: Vec<String> = re(&RE_GO_TEST, r"\bTest[A-Z0-9_][A-Za-z0-9_]*(?:/[A-Za-z0-9_-]+)*")
        .find_iter(text)
        .map(|m| m.as_str().to_string())
        .collect();
    if let Some(m) = re(&RE_E2E, r"\[sig-[a-z0-9-]+\].*").find(text) {
        out.push(m.as_str().trim().to_string());
    }
    out
}

fn names_job(text: &str) -> bool {
    re(&RE_JOB, r"\b(?:pull|ci|periodic|post)-[a-z0-9]+(?:[-.][a-z0-9]+){2,}").is_match(text)
}

fn quotes(text: &str) -> bool {
    re(&RE_QUOTE, r#"`[^`]{4,}`|"[^"]{4,}""#).is_match(text)
}

fn error_word(text: &str) -> bool {
    re(
        &RE_ERROR,
        r"(?i)\b(?:errors?|fail\w*|panic\w*|fatal|cannot|can't|unable to|not found|timed out|timeouts?|oom\w*|broke\w*|break\w*|crash\w*|flak\w*)\b",
    )
    .is_match(text)
}

static RE_REVERTS: OnceLock<Regex> = OnceLock::new();
static RE_TRAILER: OnceLock<Regex> = OnceLock::new();
static RE_URL: OnceLock<Regex> = OnceLock::new();
static RE_PR: OnceLock<Regex> = OnceLock::new();
static RE_SHA: OnceLock<Regex> = OnceLock::new();
static RE_GO_TEST: OnceLock<Regex> = OnceLock::new();
static RE_E2E: OnceLock<Regex> = OnceLock::new();
static RE_JOB: OnceLock<Regex> = OnceLock::new();
static RE_QUOTE: OnceLock<Regex> = OnceLock::new();
static RE_ERROR: OnceLock<Regex> = OnceLock::new();

/// A fixed pattern of this module, compiled once (the patterns are constants: a
/// failure to compile one is a bug caught by the tests).
fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("a constant pattern compiles"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_reverted_commits() {
        let body = "This reverts commit 0123456789ABCDEF0123456789abcdef01234567.\nThis reverts commit 0123456789abcdef0123456789abcdef01234567, reversing\nchanges made to 89abcde.";
        assert_eq!(reverted_ids(body), vec!["0123456789abcdef0123456789abcdef01234567".to_string()]);
        assert!(reverted_ids("Reverts #123").is_empty());
    }

    #[test]
    fn quotes_tests_errors_and_logs_but_not_the_culprit() {
        let q = quoted_failure(
            "Revert \"cache: keep the index warm\" (breaks TestIndexWarm)",
            "This reverts commit 0123456789abcdef0123456789abcdef01234567.\n\n\
             It made pull-project-unit-race fail with:\n\
             \n    index.go:41: cache miss on warm path\n\n\
             See #77 and https://example.com/x, fixed in 1a2b3c4d.\n\
             Reverting \"cache: keep the index warm\" until then.\n\
             Signed-off-by: A <a@example.com>",
            Some("cache: keep the index warm"),
        );
        assert_eq!(
            q.lines,
            vec![
                "(breaks TestIndexWarm)".to_string(),
                "It made pull-project-unit-race fail with:".to_string(),
                "index.go:41: cache miss on warm path".to_string(),
            ]
        );
        assert_eq!(q.tests, vec!["TestIndexWarm".to_string()]);
    }

    #[test]
    fn a_bare_revert_quotes_nothing() {
        let q = quoted_failure(
            "Revert \"Bump the image\"",
            "This reverts commit 0123456789abcdef0123456789abcdef01234567.\n\nSigned-off-by: B <b@example.com>",
            Some("Bump the image"),
        );
        assert!(q.is_empty());
        // The quoted title is blanked, so quoting it is no failure text.
        let q = quoted_failure("Revert \"Bump the image\"", "Reverts \"Bump the image\".", Some("Bump the image"));
        assert!(q.is_empty(), "{q:?}");
        assert!(reapplies("Revert \"Revert \"x\"\""));
        assert!(reapplies("Reapply \"x\""));
        assert!(!reapplies("Revert \"x\""));
    }

    #[test]
    fn e2e_names_and_quoted_strings() {
        let q = quoted_failure(
            "Revert some flags",
            "[sig-node] Pods should be restarted [Serial] started failing\nprints `unknown flag: --foo`",
            None,
        );
        assert_eq!(q.lines.len(), 2);
        assert_eq!(q.tests, vec!["[sig-node] Pods should be restarted [Serial] started failing".to_string()]);
    }
}
