//! Payload evidence from JUnit: test cases with their suite, status, failure
//! message and body, `lifecycle` attribute, `<system-out>` (which carries the YAML
//! of `junit-aggregated.xml`) and the 1-based line of the `<testcase>` element, so
//! every failure can be cited as file + line. The reading is the project's one JUnit
//! reader (`citriage_formats::junit`); this module only shapes its cases for the
//! payload analysis.
//!
//! A truncated or malformed file yields the cases read so far plus a problem that
//! names the file and the byte where it broke.

use citriage_formats::junit::{read_junit_with, ReadOptions, Status, TestCase};
use serde::{Deserialize, Serialize};
/// Outcome of one test case element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CaseStatus {
    Passed,
    Failed,
    Error,
    Skipped,
}

/// One `<testcase>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JunitCase {
    pub suite: String,
    pub classname: String,
    pub name: String,
    pub status: CaseStatus,
    /// The `message` attribute of `<failure>` / `<error>`.
    pub message: String,
    /// The element body.
    pub body: String,
    pub system_out: String,
    /// `lifecycle="informing"` opts a test out of gating.
    pub informing: bool,
    /// 1-based line of the `<testcase` tag.
    pub line: u32,
}

impl JunitCase {
    /// Failure text: message, then body when it adds something.
    pub fn failure_text(&self) -> String {
        let m = self.message.trim();
        let b = self.body.trim();
        match (m.is_empty(), b.is_empty()) {
            (true, _) => b.to_string(),
            (false, true) => m.to_string(),
            (false, false) if b.starts_with(m) => b.to_string(),
            _ => format!("{m}\n{b}"),
        }
    }
}

/// The cases of one file, and what went wrong reading it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JunitFile {
    pub cases: Vec<JunitCase>,
    pub problem: Option<String>,
}

/// Reads a JUnit document. `origin` names it in problems.
pub fn parse_junit(bytes: &[u8], origin: &str) -> JunitFile {
    parse_junit_reader(bytes, origin)
}

/// Reads a JUnit document as a stream (the reader holds a bounded piece of it at a
/// time); the same cases and problem as [`parse_junit`] over the same bytes.
pub fn parse_junit_reader(input: impl std::io::BufRead, origin: &str) -> JunitFile {
    let read = read_junit_with(input, origin, ReadOptions { system_out: true });
    JunitFile { cases: read.cases.into_iter().map(case).collect(), problem: read.problem }
}

fn case(c: TestCase) -> JunitCase {
    let status = match c.status {
        Status::Passed => CaseStatus::Passed,
        Status::Failed => CaseStatus::Failed,
        Status::Error => CaseStatus::Error,
        Status::Skipped => CaseStatus::Skipped,
    };
    let message = c.message.unwrap_or_default();
    // the reader's failure text is the message, a newline, then the body
    let body = match c.failure_text {
        None => String::new(),
        Some(t) if message.is_empty() => t,
        Some(t) if t == message => String::new(),
        Some(t) => t.strip_prefix(message.as_str()).and_then(|r| r.strip_prefix('\n')).map(str::to_string).unwrap_or(t),
    };
    JunitCase {
        // the innermost named suite
        suite: c.suite.rsplit(" / ").next().unwrap_or_default().to_string(),
        classname: c.classname,
        name: c.name,
        status,
        message,
        body,
        system_out: c.system_out.unwrap_or_default(),
        informing: c.informing,
        line: c.line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cases_lines_and_lifecycle() {
        let x = br#"<?xml version="1.0"?>
<testsuites>
  <testsuite name="openshift-tests">
    <testcase name="[sig-a] ok"/>
    <testcase name="[sig-b] broken &amp; bad" lifecycle="blocking">
      <failure message="boom: x &lt; y">stack &#x41;</failure>
    </testcase>
    <testcase name="[sig-c] new" lifecycle="informing"><failure>meh</failure></testcase>
    <testcase name="agg"><system-out>passes:
- jobrunid: "1"</system-out></testcase>
  </testsuite>
</testsuites>"#;
        let f = parse_junit(x, "j.xml");
        assert_eq!(f.problem, None);
        assert_eq!(f.cases.len(), 4);
        assert_eq!(f.cases[1].name, "[sig-b] broken & bad");
        assert_eq!(f.cases[1].line, 5);
        assert_eq!(f.cases[1].message, "boom: x < y");
        assert_eq!(f.cases[1].body, "stack A");
        assert_eq!(f.cases[1].suite, "openshift-tests");
        assert!(f.cases[2].informing);
        assert!(f.cases[3].system_out.contains("jobrunid"));
    }

    #[test]
    fn truncated_keeps_what_it_read() {
        let f = parse_junit(b"<testsuite><testcase name=\"a\"><failure message=\"m\">body", "t.xml");
        assert!(f.problem.unwrap().contains("t.xml"));
        assert_eq!(f.cases.len(), 1);
        assert_eq!(f.cases[0].status, CaseStatus::Failed);
    }
}
