//! JUnit XML rendering in the variants real jobs emit: Ginkgo v2 reports,
//! go-junit-report/gotestsum, kubetest's `junit_runner.xml`, nested suites,
//! repeated test cases (in-run retries), skipped tests and truncated uploads.
//! Also computes what kettle would ingest from each file.

use crate::text::{xml_attr, xml_text, Text};

/// How a file is formatted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Ginkgo v2 (`encoding/xml`: newlines in text become `&#xA;`).
    Ginkgo,
    /// go-junit-report / gotestsum (`encoding/xml` escaping too).
    GoJunit,
    /// kubetest's Python-written `junit_runner.xml` (raw newlines).
    Kubetest,
    /// openshift-tests (raw newlines, `lifecycle` attributes).
    OpenShift,
}

#[derive(Clone, Debug)]
pub enum Outcome {
    Pass,
    Skipped,
    /// `<failure>`; `cause` indexes the build's causes.
    Fail {
        message: String,
        body: String,
        cause: usize,
    },
    /// `<error>` (kettle ignores it: counted as not failed).
    Error {
        message: String,
    },
}

#[derive(Clone, Debug)]
pub struct Case {
    pub classname: String,
    /// `None` writes a test case with no `name` attribute.
    pub name: Option<String>,
    pub time_ms: u64,
    pub outcome: Outcome,
    pub lifecycle: Option<&'static str>,
}

#[derive(Clone, Debug, Default)]
pub struct Suite {
    pub name: Option<String>,
    pub cases: Vec<Case>,
    pub nested: Vec<Suite>,
    pub properties: Vec<(String, String)>,
    pub timestamp: String,
}

#[derive(Clone, Debug)]
pub enum Root {
    /// `<testsuites>` with child suites.
    Suites(Vec<Suite>),
    /// A bare `<testsuite>` root.
    Suite(Suite),
}

#[derive(Clone, Debug)]
pub struct JunitFile {
    /// Path relative to the build folder.
    pub rel: String,
    pub style: Style,
    pub root: Root,
    /// Keep only this share (per mille) of the bytes: a truncated upload.
    pub truncate_permille: Option<u32>,
}

/// A `<failure>` that made it into the written file.
#[derive(Clone, Debug)]
pub struct FailureLine {
    pub cause: usize,
    /// Test name as written in the file.
    pub name: String,
    /// Name kettle would give it (`None` when kettle does not see it).
    pub kettle_name: Option<String>,
    /// 1-based line where the failure text starts.
    pub line: u32,
}

/// A test entry kettle would ingest (skipped cases are dropped).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KettleTest {
    pub name: String,
    pub failed: bool,
}

fn go_escape(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '\n' => out.push_str("&#xA;"),
            '\t' => out.push_str("&#x9;"),
            '\r' => out.push_str("&#xD;"),
            c if (c as u32) < 0x20 => {}
            c => out.push(c),
        }
    }
}

fn esc_attr(style: Style, s: &str, out: &mut String) {
    match style {
        Style::Ginkgo | Style::GoJunit => go_escape(s, out),
        _ => xml_attr(s, out),
    }
}

fn esc_text(style: Style, s: &str, out: &mut String) {
    match style {
        Style::Ginkgo | Style::GoJunit => go_escape(s, out),
        _ => xml_text(s, out),
    }
}

struct Counts {
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
    time_ms: u64,
}

fn count(s: &Suite) -> Counts {
    let mut c = Counts { tests: 0, failures: 0, errors: 0, skipped: 0, time_ms: 0 };
    for k in &s.cases {
        c.tests += 1;
        c.time_ms += k.time_ms;
        match k.outcome {
            Outcome::Fail { .. } => c.failures += 1,
            Outcome::Error { .. } => c.errors += 1,
            Outcome::Skipped => c.skipped += 1,
            Outcome::Pass => {}
        }
    }
    for n in &s.nested {
        let d = count(n);
        c.tests += d.tests;
        c.failures += d.failures;
        c.errors += d.errors;
        c.skipped += d.skipped;
        c.time_ms += d.time_ms;
    }
    c
}

fn secs(style: Style, ms: u64) -> String {
    match style {
        Style::GoJunit => format!("{}.{:03}000", ms / 1000, ms % 1000),
        Style::Kubetest => format!("{}.{:03}", ms / 1000, ms % 1000),
        _ => format!("{}.{:03}", ms / 1000, ms % 1000),
    }
}

/// How kettle sees the cases of a suite.
#[derive(Clone, Copy)]
enum Level<'a> {
    /// Root `<testsuite>`: case names as they are.
    Bare,
    /// Direct child of `<testsuites>`: `"<suite> <case>"`.
    Child(Option<&'a str>),
    /// Deeper: invisible to kettle.
    Hidden,
}

struct Writer {
    t: Text,
    style: Style,
    /// (cause, name, line, byte offset after the failure, kettle name)
    fails: Vec<(usize, String, u32, usize, Option<String>)>,
    scratch: String,
}

impl Writer {
    fn suite(&mut self, s: &Suite, depth: usize, level: Level) {
        let ind = match self.style {
            Style::GoJunit => "\t".repeat(depth),
            _ => "    ".repeat(depth),
        };
        let c = count(s);
        let mut open = format!("{ind}<testsuite");
        if let Some(n) = &s.name {
            open.push_str(" name=\"");
            esc_attr(self.style, n, &mut open);
            open.push('"');
        }
        match self.style {
            Style::Ginkgo => open.push_str(&format!(
                " package=\"/home/prow/go/src/k8s.io/kubernetes/test/e2e\" tests=\"{}\" disabled=\"{}\" skipped=\"0\" errors=\"{}\" failures=\"{}\" time=\"{}\" timestamp=\"{}\"",
                c.tests - c.skipped,
                c.skipped,
                c.errors,
                c.failures,
                secs(self.style, c.time_ms),
                s.timestamp
            )),
            Style::GoJunit => open.push_str(&format!(
                " tests=\"{}\" failures=\"{}\" time=\"{}\" timestamp=\"{}\"",
                c.tests,
                c.failures,
                secs(self.style, c.time_ms),
                s.timestamp
            )),
            _ => open.push_str(&format!(
                " failures=\"{}\" tests=\"{}\" skipped=\"{}\" time=\"{}\"",
                c.failures,
                c.tests,
                c.skipped,
                secs(self.style, c.time_ms)
            )),
        }
        open.push('>');
        self.t.line(&open);
        if !s.properties.is_empty() {
            self.t.line(&format!("{ind}    <properties>"));
            for (k, v) in &s.properties {
                let mut l = format!("{ind}        <property name=\"");
                esc_attr(self.style, k, &mut l);
                l.push_str("\" value=\"");
                esc_attr(self.style, v, &mut l);
                l.push_str("\"></property>");
                self.t.line(&l);
            }
            self.t.line(&format!("{ind}    </properties>"));
        }
        for k in &s.cases {
            // Kettle calls a missing case or suite name `<unspecified>` and reads on.
            let n = k.name.as_deref().unwrap_or(UNSPECIFIED);
            let kname = match level {
                Level::Hidden => None,
                Level::Bare => Some(n.to_string()),
                Level::Child(sn) => Some(format!("{} {n}", sn.unwrap_or(UNSPECIFIED))),
            };
            self.case(k, &format!("{ind}    "), kname);
        }
        for n in &s.nested {
            self.suite(n, depth + 1, Level::Hidden);
        }
        self.t.line(&format!("{ind}</testsuite>"));
    }

    fn case(&mut self, k: &Case, ind: &str, kettle_name: Option<String>) {
        let mut l = String::with_capacity(256);
        l.push_str(ind);
        l.push_str("<testcase");
        if let Some(n) = &k.name {
            l.push_str(" name=\"");
            esc_attr(self.style, n, &mut l);
            l.push('"');
        }
        l.push_str(" classname=\"");
        esc_attr(self.style, &k.classname, &mut l);
        l.push('"');
        if self.style == Style::Ginkgo {
            let st = match k.outcome {
                Outcome::Pass => "passed",
                Outcome::Skipped => "skipped",
                Outcome::Fail { .. } => "failed",
                Outcome::Error { .. } => "panicked",
            };
            l.push_str(&format!(" status=\"{st}\""));
        }
        if let Some(lc) = k.lifecycle {
            l.push_str(&format!(" lifecycle=\"{lc}\""));
        }
        l.push_str(&format!(" time=\"{}\"", secs(self.style, k.time_ms)));
        match &k.outcome {
            Outcome::Pass => {
                if self.style == Style::Kubetest {
                    l.push_str("/>");
                } else {
                    l.push_str("></testcase>");
                }
                self.t.line(&l);
            }
            Outcome::Skipped => {
                l.push_str("><skipped message=\"skipped\"></skipped></testcase>");
                self.t.line(&l);
            }
            Outcome::Error { message } => {
                l.push_str("><error message=\"");
                esc_attr(self.style, message, &mut l);
                l.push_str("\" type=\"error\"></error></testcase>");
                self.t.line(&l);
            }
            Outcome::Fail { message, body, cause } => {
                l.push('>');
                self.t.line(&l);
                self.scratch.clear();
                self.scratch.push_str(ind);
                self.scratch.push_str("    <failure message=\"");
                let (msg_attr, typ) = match self.style {
                    Style::GoJunit => ("Failed".to_string(), ""),
                    Style::Ginkgo => (format!("[FAILED] {message}"), "failed"),
                    _ => (message.clone(), ""),
                };
                let mut a = String::new();
                esc_attr(self.style, &msg_attr, &mut a);
                self.scratch.push_str(&a);
                self.scratch.push_str("\" type=\"");
                self.scratch.push_str(typ);
                self.scratch.push_str("\">");
                let mut b = String::new();
                let text = match self.style {
                    Style::Ginkgo => format!("[FAILED] {message}\n{body}"),
                    _ => format!("{message}\n{body}"),
                };
                esc_text(self.style, &text, &mut b);
                self.scratch.push_str(&b);
                self.scratch.push_str("</failure>");
                let line = self.t.next_line();
                let s = std::mem::take(&mut self.scratch);
                self.t.line(&s);
                self.scratch = s;
                let offset = self.t.len();
                self.fails.push((*cause, k.name.clone().unwrap_or_default(), line, offset, kettle_name));
                self.t.line(&format!("{ind}</testcase>"));
            }
        }
    }
}

/// Renders a file; returns its bytes, the failures written (with lines) and
/// the tests kettle would ingest from it.
pub fn render(f: &JunitFile) -> (Vec<u8>, Vec<FailureLine>, Vec<KettleTest>) {
    let mut w = Writer { t: Text::with_capacity(4096), style: f.style, fails: Vec::new(), scratch: String::new() };
    match f.style {
        Style::Kubetest => {}
        Style::Ginkgo => {
            w.t.line("<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
        }
        _ => {
            w.t.line("<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
        }
    }
    match &f.root {
        Root::Suite(s) => w.suite(s, 0, Level::Bare),
        Root::Suites(ss) => {
            let mut tot = Counts { tests: 0, failures: 0, errors: 0, skipped: 0, time_ms: 0 };
            for s in ss {
                let c = count(s);
                tot.tests += c.tests;
                tot.failures += c.failures;
                tot.errors += c.errors;
                tot.skipped += c.skipped;
                tot.time_ms += c.time_ms;
            }
            match f.style {
                Style::Ginkgo => w.t.line(&format!(
                    "<testsuites tests=\"{}\" disabled=\"{}\" errors=\"{}\" failures=\"{}\" time=\"{}\">",
                    tot.tests - tot.skipped,
                    tot.skipped,
                    tot.errors,
                    tot.failures,
                    secs(f.style, tot.time_ms)
                )),
                _ => w.t.line("<testsuites>"),
            };
            for s in ss {
                w.suite(s, 1, Level::Child(s.name.as_deref()));
            }
            w.t.line("</testsuites>");
        }
    }
    let mut kettle = kettle_view(&f.root);
    let total = w.t.len();
    let mut bytes = w.t.into_bytes();
    let mut cut = total;
    if let Some(pm) = f.truncate_permille {
        cut = (total as u64 * u64::from(pm) / 1000) as usize;
        // Never cut inside a UTF-8 sequence.
        while cut > 0 && cut < bytes.len() && (bytes[cut] & 0xC0) == 0x80 {
            cut -= 1;
        }
        bytes.truncate(cut);
        kettle.clear();
    }
    let truncated = f.truncate_permille.is_some();
    let fails = w
        .fails
        .into_iter()
        .filter(|(_, _, _, end, _)| *end <= cut)
        .map(|(cause, name, line, _, kn)| FailureLine {
            cause,
            kettle_name: if truncated { None } else { kn },
            name,
            line,
        })
        .collect();
    (bytes, fails, kettle)
}

/// What kettle ingests from a well-formed file: for a bare `<testsuite>`
/// the direct test cases; for `<testsuites>` the direct test cases of each
/// direct child suite, named `"<suite name> <case name>"`. Skipped cases are
/// dropped; a case or suite without a name is called `<unspecified>`; successful
/// cases whose name contains `#` are dropped. (Only files directly in `artifacts/`
/// are read at all: the caller decides that.)
/// Kettle's name for a case or suite without one.
pub const UNSPECIFIED: &str = "<unspecified>";

/// Whether kettle reads a JUnit file at this path relative to the build folder: directly
/// in `artifacts/` (kettle lists that folder without recursing).
pub fn kettle_reads(rel: &str) -> bool {
    rel.strip_prefix("artifacts/").is_some_and(|f| !f.contains('/'))
}

pub fn kettle_view(root: &Root) -> Vec<KettleTest> {
    let mut out = Vec::new();
    let push = |out: &mut Vec<KettleTest>, name: String, o: &Outcome| -> bool {
        let failed = matches!(o, Outcome::Fail { .. });
        match o {
            Outcome::Skipped => {}
            _ => {
                if !name.contains('#') || failed {
                    out.push(KettleTest { name, failed });
                }
            }
        }
        true
    };
    match root {
        Root::Suite(s) => {
            for c in &s.cases {
                let n = c.name.as_deref().unwrap_or(UNSPECIFIED);
                push(&mut out, n.to_string(), &c.outcome);
            }
        }
        Root::Suites(ss) => {
            for s in ss {
                let sn = s.name.as_deref().unwrap_or(UNSPECIFIED);
                for c in &s.cases {
                    let n = c.name.as_deref().unwrap_or(UNSPECIFIED);
                    push(&mut out, format!("{sn} {n}"), &c.outcome);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(name: &str, o: Outcome) -> Case {
        Case { classname: "pkg".into(), name: Some(name.into()), time_ms: 1234, outcome: o, lifecycle: None }
    }

    #[test]
    fn failure_lines_and_kettle_names() {
        let suite = Suite {
            name: Some("k8s.io/x".into()),
            cases: vec![
                case("TestA", Outcome::Pass),
                case(
                    "TestB",
                    Outcome::Fail { message: "x_test.go:12: boom \"q\"".into(), body: "more".into(), cause: 0 },
                ),
                case("TestC", Outcome::Skipped),
            ],
            ..Default::default()
        };
        let f = JunitFile {
            rel: "artifacts/junit_1.xml".into(),
            style: Style::GoJunit,
            root: Root::Suites(vec![suite]),
            truncate_permille: None,
        };
        let (bytes, fails, kettle) = render(&f);
        let text = String::from_utf8(bytes).unwrap_or_default();
        assert_eq!(fails.len(), 1);
        let line = text.lines().nth(fails[0].line as usize - 1).unwrap_or("");
        assert!(line.contains("boom &#34;q&#34;"), "{line}");
        assert_eq!(fails[0].kettle_name.as_deref(), Some("k8s.io/x TestB"));
        assert_eq!(kettle.len(), 2);
        assert!(kettle[1].failed);
    }
}
