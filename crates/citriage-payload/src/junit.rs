//! A small streaming JUnit reader for payload job artifacts: test cases with their
//! suite, status, failure message and body, `lifecycle` attribute, `<system-out>`
//! (which carries the YAML of `junit-aggregated.xml`) and the 1-based line of the
//! `<testcase>` element, so every failure can be cited as file + line.
//!
//! A truncated or malformed file yields the cases read so far plus a problem that
//! names the file and the byte where it broke.

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;
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

fn attr(e: &BytesStart<'_>, key: &[u8]) -> Option<String> {
    e.attributes().flatten().find(|a| a.key.local_name().as_ref() == key).map(|a| {
        a.normalized_value(quick_xml::XmlVersion::default())
            .map(|v| v.into_owned())
            .unwrap_or_else(|_| String::from_utf8_lossy(&a.value).into_owned())
    })
}

#[derive(PartialEq)]
enum Sink {
    None,
    Result,
    SystemOut,
}

const MAX_TEXT: usize = 256 * 1024;

/// Reads a JUnit document. `origin` names it in problems.
pub fn parse_junit(bytes: &[u8], origin: &str) -> JunitFile {
    let mut out = JunitFile::default();
    let mut reader = Reader::from_reader(bytes);
    reader.config_mut().trim_text(false);
    let mut buf = Vec::new();
    let mut suites: Vec<String> = Vec::new();
    let mut case: Option<JunitCase> = None;
    let mut sink = Sink::None;
    let mut depth_in_case = 0usize;
    // Line counting: newlines seen up to `counted`.
    let mut counted = 0usize;
    let mut line = 1u32;
    let mut line_at = |pos: usize| -> u32 {
        let pos = pos.min(bytes.len());
        if pos > counted {
            line += bytes[counted..pos].iter().filter(|&&b| b == b'\n').count() as u32;
            counted = pos;
        }
        line
    };
    loop {
        let before = reader.buffer_position() as usize;
        let ev = reader.read_event_into(&mut buf);
        match ev {
            Err(e) => {
                out.problem = Some(format!("{origin}: malformed XML near byte {}: {e}", reader.buffer_position()));
                break;
            }
            Ok(Event::Eof) => {
                if case.is_some() || !suites.is_empty() {
                    out.problem = Some(format!("{origin}: truncated (document ends inside an element)"));
                }
                break;
            }
            Ok(Event::Start(e)) => {
                let name = e.local_name();
                match name.as_ref() {
                    b"testsuite" if case.is_none() => suites.push(attr(&e, b"name").unwrap_or_default()),
                    b"testcase" if case.is_none() => {
                        // The tag starts after any leading whitespace of this event.
                        let start =
                            bytes[before..].iter().position(|b| *b == b'<').map(|p| before + p).unwrap_or(before);
                        case = Some(new_case(&e, &suites, line_at(start)));
                        depth_in_case = 0;
                    }
                    b"failure" | b"error" if case.is_some() => {
                        set_result(case.as_mut().unwrap(), &e, name.as_ref());
                        sink = Sink::Result;
                        depth_in_case += 1;
                    }
                    b"skipped" if case.is_some() => {
                        let c = case.as_mut().unwrap();
                        if c.status == CaseStatus::Passed {
                            c.status = CaseStatus::Skipped;
                        }
                        depth_in_case += 1;
                    }
                    b"system-out" if case.is_some() => {
                        sink = Sink::SystemOut;
                        depth_in_case += 1;
                    }
                    _ => {
                        if case.is_some() {
                            depth_in_case += 1;
                        }
                    }
                }
            }
            Ok(Event::Empty(e)) => {
                let name = e.local_name();
                match name.as_ref() {
                    b"testcase" if case.is_none() => {
                        let start =
                            bytes[before..].iter().position(|b| *b == b'<').map(|p| before + p).unwrap_or(before);
                        out.cases.push(new_case(&e, &suites, line_at(start)));
                    }
                    b"failure" | b"error" if case.is_some() => set_result(case.as_mut().unwrap(), &e, name.as_ref()),
                    b"skipped" if case.is_some() => {
                        let c = case.as_mut().unwrap();
                        if c.status == CaseStatus::Passed {
                            c.status = CaseStatus::Skipped;
                        }
                    }
                    _ => {}
                }
            }
            Ok(Event::End(e)) => {
                let name = e.local_name();
                match name.as_ref() {
                    b"testcase" if case.is_some() && depth_in_case == 0 => {
                        out.cases.push(case.take().unwrap());
                        sink = Sink::None;
                    }
                    b"testsuite" if case.is_none() => {
                        suites.pop();
                    }
                    _ if case.is_some() => {
                        depth_in_case = depth_in_case.saturating_sub(1);
                        if depth_in_case == 0 {
                            sink = Sink::None;
                        }
                    }
                    _ => {}
                }
            }
            Ok(Event::Text(t)) => push_text(&mut case, &sink, &t.decode().unwrap_or_default()),
            Ok(Event::CData(t)) => push_text(&mut case, &sink, &t.decode().unwrap_or_default()),
            Ok(Event::GeneralRef(r)) => {
                let s = match r.resolve_char_ref() {
                    Ok(Some(c)) => c.to_string(),
                    _ => match r.decode().as_deref() {
                        Ok("lt") => "<".into(),
                        Ok("gt") => ">".into(),
                        Ok("amp") => "&".into(),
                        Ok("quot") => "\"".into(),
                        Ok("apos") => "'".into(),
                        Ok(other) => format!("&{other};"),
                        Err(_) => String::new(),
                    },
                };
                push_text(&mut case, &sink, &s);
            }
            Ok(_) => {}
        }
        buf.clear();
    }
    if let Some(c) = case.take() {
        // Keep what a truncated file told us about the open case.
        out.cases.push(c);
    }
    out
}

fn new_case(e: &BytesStart<'_>, suites: &[String], line: u32) -> JunitCase {
    JunitCase {
        suite: suites.iter().rev().find(|s| !s.is_empty()).cloned().unwrap_or_default(),
        classname: attr(e, b"classname").unwrap_or_default(),
        name: attr(e, b"name").unwrap_or_default(),
        status: CaseStatus::Passed,
        message: String::new(),
        body: String::new(),
        system_out: String::new(),
        informing: attr(e, b"lifecycle").is_some_and(|l| l.eq_ignore_ascii_case("informing")),
        line,
    }
}

fn set_result(c: &mut JunitCase, e: &BytesStart<'_>, name: &[u8]) {
    c.status = if name == b"error" { CaseStatus::Error } else { CaseStatus::Failed };
    if let Some(m) = attr(e, b"message") {
        if c.message.is_empty() {
            c.message = m;
        }
    }
}

fn push_text(case: &mut Option<JunitCase>, sink: &Sink, s: &str) {
    let Some(c) = case.as_mut() else { return };
    let target = match sink {
        Sink::Result => &mut c.body,
        Sink::SystemOut => &mut c.system_out,
        Sink::None => return,
    };
    if target.len() < MAX_TEXT {
        target.push_str(s);
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
