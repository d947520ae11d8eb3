//! Which lines explain a failure. Evidence is taken only from lines that say
//! what went wrong — error-level log lines, the failing test's own message and
//! the error lines of its output — never from info or debug lines, and never
//! from the wrapper lines every failed step prints ("failed to execute wrapped
//! command: exit status 1", the entrypoint's JSON, "Container test exited with
//! code 1"), which say only *that* something failed.

use std::sync::OnceLock;

use citriage_suspects::lines::strip_source_prefix;
use regex::Regex;

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("built-in pattern"))
}

/// A line that only reports that a wrapped process, container or step failed,
/// or a test-runner marker: never evidence, never a signature.
pub fn is_wrapper_line(text: &str) -> bool {
    static WRAPPER: OnceLock<Regex> = OnceLock::new();
    let t = text.trim();
    if t.is_empty() || t == "---" || t == "Failed" || t == "FAIL" || t == "fail" {
        return true;
    }
    re(
        &WRAPPER,
        r#"(?x)
        failed\ to\ execute\ wrapped\ command | wrapped\ process\ failed | "component":"entrypoint"
      | ^Container\ \S+\ exited\ with\ code | could\ not\ watch\ pod | ContainerFailed\ one\ or\ more\ containers
      | Some\ steps\ failed | could\ not\ run\ steps | Reporting\ job\ state | Link\ to\ (step|job)\ on\ registry
      | ^(error:\ )?exit\ status\ \d+$ | Ginkgo\ exit\ error | ^exit\ with\ code\ \d+ | make:\ \*\*\*.*Error\ \d+
      | Process\ gracefully\ exited | Entrypoint\ received\ interrupt | ^received\ signal | Exiting\ with\ ret=
      | finished\ with\ ret=\d | ^---\ FAIL:\ | ^===\ (RUN|PAUSE|CONT|FAIL|NAME) | ^DONE\ \d+\ tests
      | ^(FAIL|PASS|ok)\s+\S+\s+[\d.]+s$ | test\ (phase|steps)\ failed | ^Step\ phase\ \S+\ failed
      | ^\+\ (exit|rv=|set\ [-+]) | ^\{"level":"(info|debug)"
    "#,
    )
    .is_match(t)
}

/// An informational (info, debug, trace, notice or warning level) line.
pub fn is_info_line(text: &str) -> bool {
    static INFO: OnceLock<Regex> = OnceLock::new();
    re(
        &INFO,
        r#"(?xi)
        level=(info|debug|trace|notice|warn|warning)\b | "level":"(info|debug|trace|warn|warning)"
      | ^\s*(\[\d+m)?(INFO|DEBU|DEBUG|TRAC|WARN|WARNING|NOTICE)(\[0m)?\b | ^\s*[IW]\d{4}\s+\d\d:\d\d:\d\d
      | ^\s*(Successfully|Waiting\ for|Starting|Started|Enabling|Creating|Created|Running|Using|Found|Fetching|Listing|Listed|Extracted|Extracting|Completed|Processing|Gathering|Archiving|Writing|Reading|Skipping|skipping|Connecting)\b
    "#,
    )
    .is_match(strip_source_prefix(text))
}

/// True when the line says something went wrong.
pub fn has_error_marker(text: &str) -> bool {
    static MARK: OnceLock<Regex> = OnceLock::new();
    re(
        &MARK,
        r#"(?xi)
        \berr(or|ors)?\b | \bfail(s|ed|ure|ing)?\b | \bpanic | \bfatal\b | \bunable\b | \bcannot\b | can't
      | could\ not | couldn't | \bnot\ found\b | doesn't\ have | does\ not | \bdenied\b | \bforbidden\b
      | \binvalid\b | timed\ out | \btimeout\b | deadline\ exceeded | \bexceeded\b | \brefused\b | \bunexpected\b
      | \bexpected\b | \bmissing\b | no\ such | \bunknown\b | \bunsupported\b | \bdegraded\b | not\ available
      | \bnil\ pointer | \bcrash | \bOOM | \bkilled\b | \bdid\ not\ complete | never\ (became|completed|ready)
      | \bviolat | \bmust\ (not\ )?(set|have|be) | should\ not | \bconflict | \brejected\b | \bunreachable\b
      | ^\s*[EF]\d{4}\s | level=(error|fatal|panic) | \bexceed
    "#,
    )
    .is_match(text)
}

/// True when a line can serve as evidence: not a wrapper line, not info-level,
/// and it says what went wrong.
pub fn explains_failure(text: &str) -> bool {
    !is_wrapper_line(text) && !is_info_line(text) && has_error_marker(text)
}

/// The lines of a failing test's text that explain it: its first line (the
/// test's own message) unless it is a bare marker, then every error line.
pub fn explaining_lines(text: &str, limit: usize) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut first = true;
    for (i, raw) in text.lines().enumerate() {
        let l = raw.trim_end();
        if l.trim().is_empty() {
            continue;
        }
        let keep = if first { !is_wrapper_line(l) && !is_info_line(l) } else { explains_failure(l) };
        first = false;
        if keep {
            out.push((i, l.chars().take(1000).collect()));
            if out.len() >= limit {
                break;
            }
        }
    }
    out
}

/// Names of test-extension binaries (`oc-mirror-tests-ext.gz`,
/// `cluster-authentication-operator-tests-ext`) in a line.
pub fn test_binaries(text: &str) -> Vec<String> {
    static BIN: OnceLock<Regex> = OnceLock::new();
    re(&BIN, r"[A-Za-z0-9][A-Za-z0-9_.-]*-tests?-ext\b")
        .find_iter(text)
        .map(|m| m.as_str().trim_end_matches(".gz").to_string())
        .collect()
}

/// True when the line reports that test binaries could not be listed or extracted.
pub fn is_test_binary_failure(text: &str) -> bool {
    static TB: OnceLock<Regex> = OnceLock::new();
    re(
        &TB,
        r"(?i)(errors? while (listing tests|extracting binaries)|failed to extract test binaries|couldn't retrieve test suites|extracted binary at path .* does not exist|failed to list tests|could not list tests)",
    )
    .is_match(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapper_and_info_lines_explain_nothing() {
        assert!(is_wrapper_line("error: failed to execute wrapped command: exit status 1"));
        assert!(is_wrapper_line(r#"{"component":"entrypoint","error":"wrapped process failed: exit status 1"}"#));
        assert!(is_wrapper_line("Container test exited with code 1, reason Error"));
        assert!(is_wrapper_line("    --- FAIL: TestCreateCluster/Main (933.13s)"));
        assert!(!explains_failure(
            r#"time="2026-03-27T02:20:33Z" level=info msg="Listing images for \"x-tests-ext\"""#
        ));
        assert!(!explains_failure("I0327 02:20:33.000000 1 controller.go:12] syncing clusterNetwork"));
        assert!(!explains_failure("    util.go:4270: Waiting for deployment x/metrics-proxy to be ready"));
        assert!(explains_failure(
            "error: encountered errors while listing tests: invalid character 'W' looking for beginning of value"
        ));
        assert!(explains_failure(
            r#"    util.go:4275: Failed to get deployment ns/x: deployments.apps "control-plane-metrics-forwarder" not found"#
        ));
    }

    #[test]
    fn test_text_lines() {
        let text = "=== RUN   TestX\n    util.go:1: Successfully created x\n    util.go:2: Failed to get x: not found\n--- FAIL: TestX (1s)";
        let l = explaining_lines(text, 5);
        assert_eq!(l, vec![(2, "    util.go:2: Failed to get x: not found".to_string())]);
        assert_eq!(explaining_lines("Failed\nfetching kubeconfig", 5), Vec::<(usize, String)>::new());
    }

    #[test]
    fn binaries() {
        let l = r#"extracted binary at path "/tmp/c/oc-mirror-tests-ext.gz" does not exist in image "quay.io/x""#;
        assert!(is_test_binary_failure(l));
        assert_eq!(test_binaries(l), vec!["oc-mirror-tests-ext".to_string()]);
        assert!(is_test_binary_failure("error: encountered errors while listing tests: invalid character 'W'"));
    }
}
