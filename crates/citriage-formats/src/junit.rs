//! Streaming JUnit XML reader, the only one of the project: every variant real CI
//! jobs write (a bare `<testsuite>`, `<testsuites>` with nested suites, Ginkgo v2
//! message + body, go-junit-report, kubetest harness steps, retries of one test in
//! one file, skipped tests, `<error>`, OpenShift's `lifecycle` attribute and the
//! aggregated jobs' `<system-out>` YAML). It gives what the dashboards' ingester
//! (kettle) reads and what payload evidence cites: each case's 1-based line, the
//! failure message apart from the body, optionally `<system-out>`. It never builds
//! a DOM; a truncated or malformed file yields the test cases read so far (the one
//! open when it broke included) plus a problem naming where it broke.

use quick_xml::events::Event;
use quick_xml::Reader;
use serde::{Deserialize, Serialize};
use std::io::BufRead;

/// Longest failure text kept per test case; longer texts keep head and tail.
pub const MAX_FAILURE_TEXT: usize = 64 * 1024;

/// A test case's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Passed,
    /// Has a `<failure>` element (the only kind kettle counts).
    Failed,
    /// Has an `<error>` element.
    Error,
    Skipped,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::Error => "error",
            Status::Skipped => "skipped",
        }
    }
}

/// One `<testcase>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestCase {
    /// Names of the enclosing suites, outermost first, joined by ` / ` (may be empty).
    pub suite: String,
    pub classname: String,
    pub name: String,
    pub time: Option<f64>,
    pub status: Status,
    /// `message` + "\n" + body of the failure/error element (whichever exist).
    pub failure_text: Option<String>,
    /// Which occurrence of (classname, name) this is in the file, from 0.
    pub attempt: u32,
    /// `lifecycle="informing"` and similar attributes that say the test does not gate.
    pub informing: bool,
    /// 1-based line of the `<testcase` tag in the file, for citing it.
    pub line: u32,
    /// The `message` attribute of the failure or error element that decided the
    /// status (also the first part of `failure_text`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The `<system-out>` text (capped like the failure text), when the read asked
    /// for it ([`ReadOptions::system_out`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_out: Option<String>,
    /// The name kettle (the dashboards' ingester) gives this case, or `None` when
    /// kettle drops it: skipped, nested below what it reads, inside an unnamed suite
    /// of `<testsuites>`, a passing `#`-repeat, or in a file kettle cannot parse.
    pub kettle_name: Option<String>,
}

/// Result of reading one JUnit file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JunitFile {
    pub cases: Vec<TestCase>,
    /// Set when the file is truncated or malformed: where and why. Cases before
    /// the problem are kept.
    pub problem: Option<String>,
    /// Test cases without a name (kept out of `cases`).
    pub unnamed: usize,
}

/// What to keep besides what every reader needs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Keep each case's `<system-out>` (aggregated jobs carry their per-run verdicts
    /// there); off for bulk ingestion, where it would only cost memory.
    pub system_out: bool,
}

struct Open {
    line: u32,
    system_out: Option<String>,
    in_system_out: bool,
    kettle_name: Option<String>,
    classname: String,
    name: Option<String>,
    time: Option<f64>,
    status: Status,
    message: Option<String>,
    body: String,
    in_result: bool,
    informing: bool,
}

fn cap(mut s: String) -> String {
    if s.len() <= MAX_FAILURE_TEXT {
        return s;
    }
    let half = MAX_FAILURE_TEXT / 2;
    let mut head_end = half;
    while !s.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = s.len() - half;
    while !s.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let tail = s.split_off(tail_start);
    s.truncate(head_end);
    s.push_str("\n...[truncated]...\n");
    s.push_str(&tail);
    s
}

/// Reads a JUnit document from a buffered reader.
pub fn read_junit<R: BufRead>(input: R, what: &str) -> JunitFile {
    read_junit_with(input, what, ReadOptions::default())
}

/// The bytes an event was read from (between its delimiters), to count lines.
fn raw<'a>(ev: &'a Event<'a>) -> &'a [u8] {
    match ev {
        Event::Start(e) | Event::Empty(e) => e,
        Event::End(e) => e,
        Event::Text(e) | Event::Comment(e) | Event::DocType(e) => e,
        Event::CData(e) => e,
        Event::Decl(e) => e,
        Event::PI(e) => e,
        Event::GeneralRef(e) => e,
        Event::Eof => &[],
    }
}

/// Reads a JUnit document from a buffered reader, keeping what `options` asks for.
pub fn read_junit_with<R: BufRead>(input: R, what: &str, options: ReadOptions) -> JunitFile {
    let mut reader = Reader::from_reader(input);
    reader.config_mut().check_end_names = false;
    let mut buf = Vec::new();
    let mut out = JunitFile::default();
    let mut suites: Vec<String> = Vec::new();
    let mut open: Option<Open> = None;
    let mut seen: std::collections::HashMap<(String, String), u32> = std::collections::HashMap::new();
    let mut depth_root = 0usize;
    let mut saw_root = false;
    // For kettle's naming: the root element and the direct-child suite's name.
    let mut root_is_suites = false;
    let mut kettle_suite: Option<Option<String>> = None;
    // newlines read before the current event: its first line is `newlines + 1`
    let mut newlines: u32 = 0;
    let finish = |o: Open,
                  suites: &[String],
                  out: &mut JunitFile,
                  seen: &mut std::collections::HashMap<(String, String), u32>| {
        let Some(name) = o.name.filter(|n| !n.is_empty()) else {
            out.unnamed += 1;
            return;
        };
        // Kettle stops reading a file at its first test case without a name.
        let kettle_name = if out.unnamed > 0 { None } else { o.kettle_name.clone() };
        let text = match (o.message.clone().filter(|m| !m.is_empty()), o.body.trim().is_empty()) {
            (Some(m), false) => Some(format!("{m}\n{}", o.body.trim_matches('\n'))),
            (Some(m), true) => Some(m),
            (None, false) => Some(o.body.trim_matches('\n').to_string()),
            (None, true) => None,
        };
        let failure_text = match o.status {
            Status::Failed | Status::Error => Some(cap(text.unwrap_or_default())),
            _ => None,
        };
        let message = match o.status {
            Status::Failed | Status::Error => o.message.filter(|m| !m.is_empty()).map(cap),
            _ => None,
        };
        let n = seen.entry((o.classname.clone(), name.clone())).or_insert(0);
        let attempt = *n;
        *n += 1;
        out.cases.push(TestCase {
            suite: suites.iter().filter(|s| !s.is_empty()).cloned().collect::<Vec<_>>().join(" / "),
            classname: o.classname,
            name,
            time: o.time,
            status: o.status,
            failure_text,
            attempt,
            informing: o.informing,
            line: o.line,
            message,
            system_out: o.system_out.map(cap),
            kettle_name: kettle_name
                .filter(|k| !(k.contains('#') && o.status != Status::Failed))
                .filter(|_| o.status != Status::Skipped),
        });
    };
    loop {
        let ev = reader.read_event_into(&mut buf);
        let line = newlines.saturating_add(1);
        if let Ok(e) = &ev {
            newlines = newlines.saturating_add(memchr::memchr_iter(b'\n', raw(e)).count() as u32);
        }
        match ev {
            Err(e) => {
                out.problem = Some(format!("{what}: malformed XML near byte {}: {e}", reader.buffer_position()));
                break;
            }
            Ok(Event::Eof) => {
                if out.problem.is_some() {
                    // already explained
                } else if !saw_root {
                    out.problem = Some(format!("{what}: no <testsuite> or <testsuites> element (empty or not JUnit)"));
                } else if depth_root > 0 || open.is_some() {
                    out.problem = Some(format!(
                        "{what}: truncated: the file ends inside {}",
                        if open.is_some() { "a <testcase>" } else { "a <testsuite>" }
                    ));
                }
                break;
            }
            Ok(Event::Start(ref e)) => {
                let tag = e.local_name().as_ref().to_vec();
                match tag.as_slice() {
                    b"testsuites" | b"testsuite" => {
                        if saw_root && depth_root == 0 && out.problem.is_none() {
                            out.problem =
                                Some(format!("{what}: malformed: a second root element after the first one ended"));
                        }
                        if !saw_root {
                            root_is_suites = tag.as_slice() == b"testsuites";
                        }
                        saw_root = true;
                        depth_root += 1;
                        let name = attr(e, b"name");
                        if root_is_suites && depth_root == 2 {
                            kettle_suite = Some(name.clone());
                        }
                        suites.push(if tag.as_slice() == b"testsuites" {
                            String::new()
                        } else {
                            name.unwrap_or_default()
                        });
                    }
                    b"testcase" => {
                        let mut o = new_case(e, line);
                        o.kettle_name = kettle_name(root_is_suites, depth_root, &kettle_suite, &o.name);
                        open = Some(o);
                    }
                    b"failure" | b"error" | b"skipped" => {
                        if let Some(o) = open.as_mut() {
                            apply_result(o, &tag, e);
                            o.in_result = tag.as_slice() != b"skipped";
                        }
                    }
                    b"system-out" if options.system_out => {
                        if let Some(o) = open.as_mut() {
                            o.in_system_out = true;
                            o.system_out.get_or_insert_with(String::new);
                        }
                    }
                    _ => {}
                }
            }
            Ok(Event::Empty(ref e)) => {
                let tag = e.local_name().as_ref().to_vec();
                match tag.as_slice() {
                    b"testsuites" | b"testsuite" => saw_root = true,
                    b"testcase" => {
                        let mut o = new_case(e, line);
                        o.kettle_name = kettle_name(root_is_suites, depth_root, &kettle_suite, &o.name);
                        finish(o, &suites, &mut out, &mut seen)
                    }
                    b"failure" | b"error" | b"skipped" => {
                        if let Some(o) = open.as_mut() {
                            apply_result(o, &tag, e);
                        }
                    }
                    _ => {}
                }
            }
            Ok(Event::End(ref e)) => match e.local_name().as_ref() {
                b"testsuites" | b"testsuite" => {
                    depth_root = depth_root.saturating_sub(1);
                    suites.pop();
                }
                b"testcase" => {
                    if let Some(o) = open.take() {
                        finish(o, &suites, &mut out, &mut seen);
                    }
                }
                b"failure" | b"error" | b"skipped" => {
                    if let Some(o) = open.as_mut() {
                        o.in_result = false;
                    }
                }
                b"system-out" => {
                    if let Some(o) = open.as_mut() {
                        o.in_system_out = false;
                    }
                }
                _ => {}
            },
            Ok(Event::Text(t)) => {
                if let Some(sink) = open.as_mut().and_then(Open::sink) {
                    sink.push_str(&t.decode().unwrap_or_default());
                }
            }
            Ok(Event::CData(t)) => {
                if let Some(sink) = open.as_mut().and_then(Open::sink) {
                    sink.push_str(&t.decode().unwrap_or_default());
                }
            }
            Ok(Event::GeneralRef(r)) => {
                if let Some(sink) = open.as_mut().and_then(Open::sink) {
                    if let Ok(Some(c)) = r.resolve_char_ref() {
                        sink.push(c);
                    } else if let Ok(name) = r.decode() {
                        match quick_xml::escape::resolve_predefined_entity(&name) {
                            Some(s) => sink.push_str(s),
                            None => {
                                sink.push('&');
                                sink.push_str(&name);
                                sink.push(';');
                            }
                        }
                    }
                }
            }
            Ok(_) => {}
        }
        buf.clear();
    }
    if let Some(o) = open.take() {
        // A file that broke inside a test case: keep what it said about that case.
        finish(o, &suites, &mut out, &mut seen);
    }
    if out.problem.is_some() {
        // Kettle parses the whole document or nothing.
        for c in &mut out.cases {
            c.kettle_name = None;
        }
    }
    out
}

/// Kettle's naming: a case directly under a root `<testsuite>` keeps its name; a case
/// directly under a named `<testsuite>` of a root `<testsuites>` becomes
/// `"<suite> <name>"`; anything else is not read by kettle.
fn kettle_name(
    root_is_suites: bool,
    depth: usize,
    suite: &Option<Option<String>>,
    name: &Option<String>,
) -> Option<String> {
    let name = name.as_ref()?;
    match (root_is_suites, depth) {
        (false, 1) => Some(name.clone()),
        (true, 2) => match suite {
            Some(Some(s)) => Some(format!("{s} {name}")),
            _ => None,
        },
        _ => None,
    }
}

/// Reads a JUnit document from bytes.
pub fn parse_junit(bytes: &[u8], what: &str) -> JunitFile {
    read_junit(bytes, what)
}

fn attr(e: &quick_xml::events::BytesStart<'_>, key: &[u8]) -> Option<String> {
    e.attributes().flatten().find(|a| a.key.local_name().as_ref() == key).map(|a| {
        a.normalized_value(quick_xml::XmlVersion::default())
            .map(|v| v.into_owned())
            .unwrap_or_else(|_| String::from_utf8_lossy(&a.value).into_owned())
    })
}

impl Open {
    /// Where text read now goes (a failure body or `<system-out>`), while under its cap.
    fn sink(&mut self) -> Option<&mut String> {
        let s = if self.in_result {
            &mut self.body
        } else if self.in_system_out {
            self.system_out.as_mut()?
        } else {
            return None;
        };
        (s.len() < MAX_FAILURE_TEXT * 4).then_some(s)
    }
}

fn new_case(e: &quick_xml::events::BytesStart<'_>, line: u32) -> Open {
    let lifecycle = attr(e, b"lifecycle");
    Open {
        line,
        system_out: None,
        in_system_out: false,
        kettle_name: None,
        classname: attr(e, b"classname").unwrap_or_default(),
        name: attr(e, b"name"),
        time: attr(e, b"time").and_then(|t| t.trim().parse::<f64>().ok()).filter(|t| t.is_finite() && *t >= 0.0),
        status: Status::Passed,
        message: None,
        body: String::new(),
        in_result: false,
        informing: lifecycle.is_some_and(|l| l.trim().eq_ignore_ascii_case("informing")),
    }
}

fn apply_result(o: &mut Open, tag: &[u8], e: &quick_xml::events::BytesStart<'_>) {
    let status = match tag {
        b"failure" => Status::Failed,
        b"error" => Status::Error,
        _ => Status::Skipped,
    };
    // A failure outranks an error, which outranks skipped.
    let rank = |s: Status| match s {
        Status::Failed => 3,
        Status::Error => 2,
        Status::Skipped => 1,
        Status::Passed => 0,
    };
    if rank(status) > rank(o.status) {
        o.status = status;
        if status != Status::Skipped {
            o.message = attr(e, b"message");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants() {
        let x = br#"<?xml version="1.0"?>
<testsuites><testsuite name="Kubernetes e2e suite"><testsuite name="inner">
<testcase name="[sig-x] a" classname="Kubernetes e2e suite" time="1.5"><failure message="[FAILED] boom &amp; bust" type="failed">stack
at x.go:12</failure></testcase>
<testcase name="b" classname="c"><skipped message="skip"/></testcase>
<testcase name="e" classname="c"><error message="err">&lt;body&gt;</error></testcase>
<testcase name="r" classname="c"><failure>first</failure></testcase>
<testcase name="r" classname="c"/>
<testcase name="inf" classname="c" lifecycle="informing"><failure><![CDATA[cdata <text>]]></failure></testcase>
</testsuite></testsuite></testsuites>"#;
        let f = parse_junit(x, "j.xml");
        assert_eq!(f.problem, None);
        assert_eq!(f.cases.len(), 6);
        assert_eq!(f.cases[0].suite, "Kubernetes e2e suite / inner");
        assert_eq!(f.cases[0].failure_text.as_deref(), Some("[FAILED] boom & bust\nstack\nat x.go:12"));
        assert_eq!(f.cases[1].status, Status::Skipped);
        assert_eq!(f.cases[2].status, Status::Error);
        assert_eq!(f.cases[2].failure_text.as_deref(), Some("err\n<body>"));
        assert_eq!((f.cases[3].attempt, f.cases[3].status), (0, Status::Failed));
        assert_eq!((f.cases[4].attempt, f.cases[4].status), (1, Status::Passed));
        assert!(f.cases[5].informing);
        assert_eq!(f.cases[0].kettle_name, None, "nested two suites deep: kettle does not read it");
        let g = parse_junit(br#"<testsuites><testsuite name="S"><testcase name="a"/><testcase name="b#1"/><testcase name="c"><skipped/></testcase></testsuite></testsuites>"#, "k.xml");
        assert_eq!(g.cases[0].kettle_name.as_deref(), Some("S a"));
        assert_eq!(g.cases[1].kettle_name, None, "passing # repeats are dropped");
        assert_eq!(g.cases[2].kettle_name, None, "skipped tests are dropped");
        let h = parse_junit(br#"<testsuite><testcase name="a"><failure/></testcase></testsuite>"#, "k.xml");
        assert_eq!(h.cases[0].kettle_name.as_deref(), Some("a"));
        assert_eq!(f.cases[5].failure_text.as_deref(), Some("cdata <text>"));
    }

    #[test]
    fn truncated_and_broken() {
        let f = parse_junit(br#"<testsuite><testcase name="a"/><testcase name="b"><failure>x"#, "j.xml");
        assert_eq!(f.cases.len(), 2, "the case open when the file broke is kept");
        assert_eq!(f.cases[1].status, Status::Failed);
        assert!(f.cases.iter().all(|c| c.kettle_name.is_none()), "kettle reads nothing of a broken file");
        assert!(f.problem.as_deref().unwrap().contains("truncated"), "{:?}", f.problem);
        let f = parse_junit(b"", "j.xml");
        assert!(f.problem.unwrap().contains("no <testsuite>"));
        let f = parse_junit(b"\x00\x01binary junk \xff\xfe <<<", "j.xml");
        assert!(f.problem.is_some());
        let f = parse_junit(br#"<testsuite><testcase classname="c"/><testcase name="ok"/></testsuite>"#, "j.xml");
        assert_eq!((f.cases.len(), f.unnamed), (1, 1));
    }
}
