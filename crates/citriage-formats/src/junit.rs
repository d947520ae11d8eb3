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
    /// kettle drops it: skipped (a `<skipped>` element, even beside a `<failure>`),
    /// nested below what it reads, a passing `#`-repeat, or in a file kettle cannot
    /// parse. A missing name (case or suite) is `<unspecified>`, as kettle writes it.
    pub kettle_name: Option<String>,
}

/// Result of reading one JUnit file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JunitFile {
    pub cases: Vec<TestCase>,
    /// Set when the file is truncated or malformed (where and why; cases before the
    /// problem are kept), or when a test case's `time` is not a duration: not a number,
    /// not finite (`1e400`, `inf`, `NaN`), negative or longer than
    /// [`citriage_model::time::SANE_MAX_DURATION`] (the file, the case and the value
    /// as written; that case has no time, the rest of the file is read). Both are said,
    /// the file's first. A bad time alone does not make kettle reject the file.
    pub problem: Option<String>,
    /// Test cases without a name (kept in `cases` as `<unspecified>`).
    pub unnamed: usize,
    /// Why kettle's XML parser (Python's expat) rejects the file, or finds no tests in
    /// it, when citriage still reads it: an undefined entity, a control character, a
    /// mismatched end tag, text outside the root, an unexpected root element. Kettle
    /// then ingests no test of the file (every `kettle_name` is `None`).
    pub kettle_rejects: Option<String>,
    /// Why kettle fails on the whole build because of this file: a `time` attribute
    /// Python's `float()` refuses, on a case kettle reads. Kettle then writes no row for
    /// the build at all.
    pub kettle_fails_build: Option<String>,
}

/// Unnamed test cases and suites are called this, as kettle calls them.
pub const UNSPECIFIED: &str = "<unspecified>";

/// Whether Python's `float()` accepts the text (kettle reads `time` with it; an empty
/// value is read as 0).
pub fn python_float_ok(raw: &str) -> bool {
    let t = raw.trim_matches(|c: char| c.is_whitespace());
    if t.is_empty() {
        return false;
    }
    let body = t.strip_prefix(['+', '-']).unwrap_or(t);
    let lower = body.to_ascii_lowercase();
    if matches!(lower.as_str(), "inf" | "infinity" | "nan") {
        return true;
    }
    // Underscores only between digits.
    let b = body.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'_' {
            let ok = i > 0 && i + 1 < b.len() && b[i - 1].is_ascii_digit() && b[i + 1].is_ascii_digit();
            if !ok {
                return false;
            }
        } else if !(c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-')) {
            return false;
        }
    }
    body.replace('_', "").parse::<f64>().is_ok()
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
    /// The raw `time` attribute, when the case is one kettle reads.
    kettle_time: Option<String>,
    has_skipped: bool,
    classname: String,
    name: Option<String>,
    time: Option<f64>,
    /// The `time` attribute as written, when it is not a duration, and why.
    bad_time: Option<(String, &'static str)>,
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

/// Longest run of text, CDATA or comment handed to the XML reader as one piece;
/// longer runs are split (see [`Bounded`]), so the reader's buffer stays this small
/// whatever the file holds.
pub const MAX_PIECE: usize = 1 << 20;

/// Longest tag, processing instruction or document type declaration read (their
/// attributes cannot be split): a longer one ends the read with a problem naming it.
pub const MAX_TAG: usize = 8 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lex {
    Text,
    /// After `<`, before the kind of markup is known (`look` holds what followed).
    Open,
    Tag,
    Comment,
    CData,
    Pi,
    Doctype,
}

/// A reader of XML that splits every long run of character data into pieces the XML
/// reader reads one at a time: text gets an empty comment `<!---->` between pieces,
/// CDATA is closed and reopened (`]]><![CDATA[`), a comment is closed and reopened.
/// The document means the same (texts are joined again by the JUnit reader, comments
/// are ignored) and keeps its lines, but no event is longer than [`MAX_PIECE`], so a
/// 300 MB `<system-out>` costs a megabyte of buffer instead of 300 MB. Pieces are cut
/// at character boundaries and never inside an entity reference. Tags and the like
/// longer than [`MAX_TAG`] are an error.
pub struct Bounded<R> {
    inner: R,
    out: Vec<u8>,
    pos: usize,
    lex: Lex,
    look: Vec<u8>,
    /// Bytes of the current run (text, comment, CDATA) or markup.
    run: usize,
    /// The last two bytes seen in the current state (ends of comments, CDATA, PIs).
    last: [u8; 2],
    /// Inside an entity reference (`&...;`): how many bytes of it so far.
    in_ref: usize,
    quote: u8,
    depth: i32,
}

impl<R: BufRead> Bounded<R> {
    pub fn new(inner: R) -> Bounded<R> {
        Bounded {
            inner,
            out: Vec::with_capacity(64 << 10),
            pos: 0,
            lex: Lex::Text,
            look: Vec::new(),
            run: 0,
            last: [0, 0],
            in_ref: 0,
            quote: 0,
            depth: 0,
        }
    }

    fn too_long(&self, what: &str) -> std::io::Error {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{what} longer than {} MiB (refused)", MAX_TAG >> 20),
        )
    }

    /// Processes one byte of input into `out`.
    fn byte(&mut self, b: u8) -> std::io::Result<()> {
        let boundary = b & 0xC0 != 0x80;
        match self.lex {
            Lex::Text => {
                if b == b'<' {
                    self.lex = Lex::Open;
                    self.look.clear();
                    self.run = 1;
                    self.in_ref = 0;
                    self.out.push(b);
                    return Ok(());
                }
                if self.run >= MAX_PIECE && self.in_ref == 0 && boundary && b != b'&' {
                    self.out.extend_from_slice(b"<!---->");
                    self.run = 0;
                }
                match b {
                    b'&' => self.in_ref = 1,
                    b';' => self.in_ref = 0,
                    // A reference is short; a bare `&` is the reader's problem to report.
                    _ if self.in_ref > 0 => self.in_ref = if self.in_ref > 32 { 0 } else { self.in_ref + 1 },
                    _ => {}
                }
                self.run += 1;
                self.out.push(b);
            }
            Lex::Open => {
                self.out.push(b);
                self.look.push(b);
                self.run += 1;
                let look = self.look.as_slice();
                self.lex = if look == b"!--" {
                    Lex::Comment
                } else if look == b"![CDATA[" {
                    Lex::CData
                } else if look[0] == b'?' {
                    Lex::Pi
                } else if look[0] != b'!' {
                    if b == b'>' {
                        Lex::Text
                    } else {
                        if b == b'"' || b == b'\'' {
                            self.quote = b;
                        } else {
                            self.quote = 0;
                        }
                        Lex::Tag
                    }
                } else if b"![CDATA[".starts_with(look) || b"!--".starts_with(look) {
                    Lex::Open
                } else if b == b'>' {
                    Lex::Text
                } else {
                    self.depth = i32::from(b == b'[');
                    Lex::Doctype
                };
                if self.lex != Lex::Open {
                    self.last = [0, 0];
                    if matches!(self.lex, Lex::Text | Lex::Comment | Lex::CData) {
                        self.run = 0;
                    }
                }
            }
            Lex::Tag => {
                self.run += 1;
                if self.run > MAX_TAG {
                    return Err(self.too_long("a tag"));
                }
                self.out.push(b);
                match (self.quote, b) {
                    (0, b'"' | b'\'') => self.quote = b,
                    (0, b'>') => {
                        self.lex = Lex::Text;
                        self.run = 0;
                    }
                    (q, c) if q == c => self.quote = 0,
                    _ => {}
                }
            }
            Lex::Comment | Lex::CData => {
                let (close, open, end): (&[u8], &[u8], u8) =
                    if self.lex == Lex::Comment { (b"-->", b"<!--", b'-') } else { (b"]]>", b"<![CDATA[", b']') };
                if b == b'>' && self.last == [end, end] {
                    self.out.push(b);
                    self.lex = Lex::Text;
                    self.run = 0;
                    return Ok(());
                }
                if self.run >= MAX_PIECE && boundary && b != end && self.last[1] != end {
                    self.out.extend_from_slice(close);
                    self.out.extend_from_slice(open);
                    self.run = 0;
                    self.last = [0, 0];
                }
                self.out.push(b);
                self.run += 1;
                self.last = [self.last[1], b];
            }
            Lex::Pi => {
                self.run += 1;
                if self.run > MAX_TAG {
                    return Err(self.too_long("a processing instruction"));
                }
                self.out.push(b);
                if b == b'>' && self.last[1] == b'?' {
                    self.lex = Lex::Text;
                    self.run = 0;
                }
                self.last = [self.last[1], b];
            }
            Lex::Doctype => {
                self.run += 1;
                if self.run > MAX_TAG {
                    return Err(self.too_long("a declaration"));
                }
                self.out.push(b);
                match b {
                    b'[' => self.depth += 1,
                    b']' => self.depth -= 1,
                    b'>' if self.depth <= 0 => {
                        self.lex = Lex::Text;
                        self.run = 0;
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }
}

impl<R: BufRead> std::io::Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let avail = self.fill_buf()?;
        let n = avail.len().min(buf.len());
        buf[..n].copy_from_slice(&avail[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Bounded<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        while self.pos >= self.out.len() {
            self.out.clear();
            self.pos = 0;
            let chunk = self.inner.fill_buf()?;
            if chunk.is_empty() {
                break;
            }
            let n = chunk.len().min(64 << 10);
            let taken: Vec<u8> = chunk[..n].to_vec();
            self.inner.consume(n);
            for b in taken {
                self.byte(b)?;
            }
        }
        Ok(&self.out[self.pos..])
    }
    fn consume(&mut self, amt: usize) {
        self.pos = (self.pos + amt).min(self.out.len());
    }
}

/// Reads a JUnit document from a buffered reader, keeping what `options` asks for.
/// The input is read once, a piece at a time ([`Bounded`]): memory stays bounded by
/// the test cases kept, whatever the size of the file.
pub fn read_junit_with<R: BufRead>(input: R, what: &str, options: ReadOptions) -> JunitFile {
    let mut reader = Reader::from_reader(Bounded::new(input));
    reader.config_mut().check_end_names = false;
    let mut buf = Vec::new();
    let mut out = JunitFile::default();
    let mut suites: Vec<String> = Vec::new();
    let mut open: Option<Open> = None;
    let mut seen: std::collections::HashMap<(String, String), u32> = std::collections::HashMap::new();
    let mut depth_root = 0usize;
    let mut saw_root = false;
    // For kettle: every open element (its whole path, which decides what kettle reads),
    // the root's tag, the name of the root's child being read, and why expat would refuse.
    let mut stack: Vec<Vec<u8>> = Vec::new();
    let mut root: Option<Vec<u8>> = None;
    let mut kettle_suite: Option<String> = None;
    let mut rejects: Option<String> = None;
    // newlines read before the current event: its first line is `newlines + 1`
    let mut newlines: u32 = 0;
    let reject = |r: &mut Option<String>, why: String| {
        if r.is_none() {
            *r = Some(format!("{what}: {why}"));
        }
    };
    // The first case whose time is not a duration (name, value, why) and how many in all.
    let mut bad_times: (Option<(String, String, &'static str)>, usize) = (None, 0);
    let finish = |o: Open,
                  suites: &[String],
                  out: &mut JunitFile,
                  seen: &mut std::collections::HashMap<(String, String), u32>,
                  bad_times: &mut (Option<(String, String, &'static str)>, usize)| {
        let name = match o.name.filter(|n| !n.is_empty()) {
            Some(n) => n,
            None => {
                out.unnamed += 1;
                UNSPECIFIED.to_string()
            }
        };
        if let Some((value, why)) = o.bad_time {
            bad_times.1 += 1;
            bad_times.0.get_or_insert((name.clone(), value, why));
        }
        if let Some(t) = o.kettle_time.as_deref() {
            if !t.is_empty() && !python_float_ok(t) && out.kettle_fails_build.is_none() {
                out.kettle_fails_build =
                    Some(format!("{what}: test case {name:?} has time={t:?}, which kettle cannot read as a number"));
            }
        }
        let kettle_name = o.kettle_name.clone();
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
                .filter(|_| o.status != Status::Skipped && !o.has_skipped),
        });
    };
    loop {
        let ev = reader.read_event_into(&mut buf);
        let line = newlines.saturating_add(1);
        if let Ok(e) = &ev {
            newlines = newlines.saturating_add(memchr::memchr_iter(b'\n', raw(e)).count() as u32);
        }
        match ev {
            Err(quick_xml::Error::Io(e)) => {
                // The input failed (a corrupt or oversized stream, a refused tag): say
                // so, not that the XML is malformed.
                out.problem = Some(format!("{what}: cannot read past byte {}: {e}", reader.buffer_position()));
                break;
            }
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
                check_element(e, &stack, &mut root, &mut rejects, &reject);
                if stack.len() == 1 && root.as_deref() == Some(b"testsuites") {
                    kettle_suite = Some(attr(e, b"name").unwrap_or_else(|| UNSPECIFIED.to_string()));
                }
                let kettle_reads = kettle_reads_case(root.as_deref(), stack.len());
                stack.push(e.name().as_ref().to_vec());
                match tag.as_slice() {
                    b"testsuites" | b"testsuite" => {
                        if saw_root && depth_root == 0 && out.problem.is_none() {
                            out.problem =
                                Some(format!("{what}: malformed: a second root element after the first one ended"));
                        }
                        saw_root = true;
                        depth_root += 1;
                        let name = attr(e, b"name");
                        suites.push(if tag.as_slice() == b"testsuites" {
                            String::new()
                        } else {
                            name.unwrap_or_default()
                        });
                    }
                    b"testcase" => {
                        let mut o = new_case(e, line);
                        if kettle_reads {
                            o.kettle_name = Some(kettle_case_name(root.as_deref(), &kettle_suite, &o.name));
                            o.kettle_time = Some(attr(e, b"time").unwrap_or_default());
                        }
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
                check_element(e, &stack, &mut root, &mut rejects, &reject);
                let kettle_reads = kettle_reads_case(root.as_deref(), stack.len());
                match tag.as_slice() {
                    b"testsuites" | b"testsuite" => saw_root = true,
                    b"testcase" => {
                        let mut o = new_case(e, line);
                        if kettle_reads {
                            o.kettle_name = Some(kettle_case_name(root.as_deref(), &kettle_suite, &o.name));
                            o.kettle_time = Some(attr(e, b"time").unwrap_or_default());
                        }
                        finish(o, &suites, &mut out, &mut seen, &mut bad_times)
                    }
                    b"failure" | b"error" | b"skipped" => {
                        if let Some(o) = open.as_mut() {
                            apply_result(o, &tag, e);
                        }
                    }
                    _ => {}
                }
            }
            Ok(Event::End(ref e)) => {
                match stack.pop() {
                    Some(open_tag) if open_tag.as_slice() != e.name().as_ref() => reject(
                        &mut rejects,
                        format!(
                            "mismatched tag: </{}> closes <{}>",
                            String::from_utf8_lossy(e.name().as_ref()),
                            String::from_utf8_lossy(&open_tag)
                        ),
                    ),
                    None => reject(&mut rejects, "an end tag with no element open".into()),
                    _ => {}
                }
                let local = e.local_name().as_ref().to_vec();
                match local.as_slice() {
                    b"testsuites" | b"testsuite" => {
                        depth_root = depth_root.saturating_sub(1);
                        suites.pop();
                    }
                    b"testcase" => {
                        if let Some(o) = open.take() {
                            finish(o, &suites, &mut out, &mut seen, &mut bad_times);
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
                }
            }
            Ok(Event::Text(t)) => {
                if let Some(c) = control_char(t.as_ref()) {
                    reject(&mut rejects, format!("control character 0x{c:02x} in text"));
                }
                if stack.is_empty() && !t.as_ref().iter().all(|b| b.is_ascii_whitespace()) {
                    reject(&mut rejects, "text outside the root element".into());
                }
                if let Some(sink) = open.as_mut().and_then(Open::sink) {
                    sink.push_str(&t.decode().unwrap_or_default());
                }
            }
            Ok(Event::CData(t)) => {
                if let Some(c) = control_char(t.as_ref()) {
                    reject(&mut rejects, format!("control character 0x{c:02x} in CDATA"));
                }
                if let Some(sink) = open.as_mut().and_then(Open::sink) {
                    sink.push_str(&t.decode().unwrap_or_default());
                }
            }
            Ok(Event::GeneralRef(r)) => {
                match r.resolve_char_ref() {
                    Ok(Some(c)) if !xml_char(c) => {
                        reject(&mut rejects, format!("reference to invalid character number {}", c as u32))
                    }
                    Ok(Some(_)) => {}
                    Err(_) => reject(&mut rejects, "a malformed character reference".into()),
                    Ok(None) => {
                        let name = r.decode().map(|n| n.into_owned()).unwrap_or_default();
                        if quick_xml::escape::resolve_predefined_entity(&name).is_none() {
                            reject(&mut rejects, format!("undefined entity &{name};"));
                        }
                    }
                }
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
        finish(o, &suites, &mut out, &mut seen, &mut bad_times);
    }
    if rejects.is_none() && !saw_root && root.is_some() {
        // A well-formed document whose root kettle does not know.
        rejects = root.as_deref().map(|r| format!("{what}: unexpected root element <{}>", String::from_utf8_lossy(r)));
    }
    if let Some(p) = &out.problem {
        rejects.get_or_insert_with(|| p.clone());
    }
    if rejects.is_some() {
        // Kettle parses the whole document or nothing.
        for c in &mut out.cases {
            c.kettle_name = None;
        }
        out.kettle_fails_build = None;
    }
    out.kettle_rejects = rejects;
    if let (Some((name, value, why)), n) = bad_times {
        let more = match n {
            1 => String::new(),
            n => format!(" (and {} more test case(s) with such a time)", n - 1),
        };
        let p = format!(
            "{what}: test case {name:?} has time={value:?}, which is not a duration ({why}; \
             seconds from 0 to {} are read): the case is kept without a time{more}",
            citriage_model::time::SANE_MAX_DURATION
        );
        out.problem = Some(match out.problem.take() {
            Some(first) => format!("{first}; {p}"),
            None => p,
        });
    }
    out
}

/// Whether kettle reads a `<testcase>` with `depth` open ancestors: a direct child of a
/// root `<testsuite>`, or a child of any direct child of a root `<testsuites>`.
fn kettle_reads_case(root: Option<&[u8]>, depth: usize) -> bool {
    matches!((root, depth), (Some(b"testsuite"), 1) | (Some(b"testsuites"), 2))
}

/// Kettle's name of a case it reads: the case's name under a root `<testsuite>`,
/// `"<suite> <name>"` under `<testsuites>`; a missing name is `<unspecified>` (an empty
/// one stays empty).
fn kettle_case_name(root: Option<&[u8]>, suite: &Option<String>, name: &Option<String>) -> String {
    let name = name.clone().unwrap_or_else(|| UNSPECIFIED.to_string());
    match root {
        Some(b"testsuites") => format!("{} {name}", suite.as_deref().unwrap_or(UNSPECIFIED)),
        _ => name,
    }
}

/// Checks an element as expat would: one root, known to kettle; attributes without
/// control characters or undefined entities.
fn check_element(
    e: &quick_xml::events::BytesStart<'_>,
    stack: &[Vec<u8>],
    root: &mut Option<Vec<u8>>,
    rejects: &mut Option<String>,
    reject: &dyn Fn(&mut Option<String>, String),
) {
    if stack.is_empty() {
        match root {
            Some(_) => reject(rejects, "junk after the document element (a second root)".into()),
            None => {
                let tag = e.name().as_ref().to_vec();
                if tag.as_slice() != b"testsuite" && tag.as_slice() != b"testsuites" {
                    reject(rejects, format!("unexpected root element <{}>", String::from_utf8_lossy(&tag)));
                }
                *root = Some(tag);
            }
        }
    }
    let mut keys: Vec<Vec<u8>> = Vec::new();
    for a in e.attributes().with_checks(false) {
        let Ok(a) = a else {
            reject(rejects, "a malformed attribute".into());
            continue;
        };
        if keys.contains(&a.key.as_ref().to_vec()) {
            reject(rejects, format!("duplicate attribute {}", String::from_utf8_lossy(a.key.as_ref())));
        }
        keys.push(a.key.as_ref().to_vec());
        if let Some(c) = control_char(&a.value) {
            reject(rejects, format!("control character 0x{c:02x} in an attribute"));
        }
        let v = String::from_utf8_lossy(&a.value);
        let mut rest = v.as_ref();
        while let Some(i) = rest.find('&') {
            let after = &rest[i + 1..];
            let Some(j) = after.find(';') else {
                reject(rejects, "a bare & in an attribute".into());
                break;
            };
            let name = &after[..j];
            let ok = match name.strip_prefix('#') {
                Some(num) => {
                    let n = match num.strip_prefix('x') {
                        Some(h) => u32::from_str_radix(h, 16).ok(),
                        None => num.parse::<u32>().ok(),
                    };
                    n.and_then(char::from_u32).is_some_and(xml_char)
                }
                None => quick_xml::escape::resolve_predefined_entity(name).is_some(),
            };
            if !ok {
                reject(rejects, format!("undefined entity or invalid reference &{name}; in an attribute"));
            }
            rest = &after[j + 1..];
        }
    }
}

/// The first byte XML 1.0 forbids (a C0 control other than tab, newline, return).
fn control_char(bytes: &[u8]) -> Option<u8> {
    bytes.iter().copied().find(|&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r'))
}

/// Whether XML 1.0 allows the character.
fn xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
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
        // Long texts keep their head and tail as they grow, as `cap` keeps them at
        // the end, so memory stays bounded whatever the number of pieces.
        if s.len() >= MAX_FAILURE_TEXT * 4 {
            *s = cap(std::mem::take(s));
        }
        Some(s)
    }
}

fn new_case(e: &quick_xml::events::BytesStart<'_>, line: u32) -> Open {
    let lifecycle = attr(e, b"lifecycle");
    // A missing or empty time is no time; any other text must be a duration.
    let (time, bad_time) = match attr(e, b"time").filter(|t| !t.trim().is_empty()) {
        None => (None, None),
        Some(t) => match citriage_model::time::parse_duration_secs(&t) {
            Ok(v) => (Some(v), None),
            Err(why) => {
                // Said as written, but not at any length.
                let mut shown = t;
                if shown.len() > 64 {
                    let mut end = 64;
                    while !shown.is_char_boundary(end) {
                        end -= 1;
                    }
                    shown.truncate(end);
                    shown.push_str("...");
                }
                (None, Some((shown, why)))
            }
        },
    };
    Open {
        line,
        system_out: None,
        in_system_out: false,
        kettle_name: None,
        kettle_time: None,
        has_skipped: false,
        classname: attr(e, b"classname").unwrap_or_default(),
        name: attr(e, b"name"),
        time,
        bad_time,
        status: Status::Passed,
        message: None,
        body: String::new(),
        in_result: false,
        informing: lifecycle.is_some_and(|l| l.trim().eq_ignore_ascii_case("informing")),
    }
}

fn apply_result(o: &mut Open, tag: &[u8], e: &quick_xml::events::BytesStart<'_>) {
    if tag == b"skipped" {
        o.has_skipped = true;
    }
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
        assert_eq!((f.cases.len(), f.unnamed), (2, 1));
        assert_eq!(f.cases[0].name, UNSPECIFIED);
        let k: Vec<_> = f.cases.iter().map(|c| c.kettle_name.as_deref()).collect();
        assert_eq!(k, [Some("<unspecified>"), Some("ok")], "kettle reads on after an unnamed case");
    }

    #[test]
    fn kettle_corner_cases() {
        let names = |x: &[u8]| {
            let f = parse_junit(x, "k.xml");
            (f.cases.iter().map(|c| c.kettle_name.clone()).collect::<Vec<_>>(), f.kettle_rejects, f.kettle_fails_build)
        };
        // An empty name stays empty; a suite without a name is <unspecified>.
        let (k, r, _) = names(br#"<testsuites><testsuite><testcase name=""/><testcase/></testsuite></testsuites>"#);
        assert_eq!(k, [Some("<unspecified> ".into()), Some("<unspecified> <unspecified>".into())]);
        assert_eq!(r, None);
        // failure + skipped: kettle skips the case; citriage keeps the failure.
        let f = parse_junit(
            br#"<testsuite><testcase name="a"><failure>x</failure><skipped/></testcase></testsuite>"#,
            "k.xml",
        );
        assert_eq!((f.cases[0].status, f.cases[0].kettle_name.clone()), (Status::Failed, None));
        // Files expat refuses.
        for (x, why) in [
            (
                &br#"<testsuite><testcase name="a"><failure>a&nbsp;b</failure></testcase></testsuite>"#[..],
                "undefined entity",
            ),
            (b"<testsuite><testcase name=\"a\"><failure>a\x01b</failure></testcase></testsuite>", "control character"),
            (br#"<testsuite><testcase name="a"></testsuit></testcase></testsuite>"#, "mismatched tag"),
            (br#"<results><testsuite><testcase name="a"/></testsuite></results>"#, "unexpected root"),
            (br#"<testsuite><testcase name="a&#1;"/></testsuite>"#, "invalid reference"),
        ] {
            let (k, r, _) = names(x);
            assert!(k.iter().all(Option::is_none), "{why}: {k:?}");
            assert!(r.as_deref().is_some_and(|r| r.contains(why)), "{why}: {r:?}");
        }
        // A time Python's float() refuses fails kettle's whole build; these it reads.
        let (_, r, fails) = names(br#"<testsuite><testcase name="a" time="1.5s"/></testsuite>"#);
        assert_eq!(r, None);
        assert!(fails.is_some_and(|w| w.contains("1.5s")));
        for ok in ["", " 2 ", "1_000", "1e3", "nan", "-Infinity", ".5"] {
            let x = format!(r#"<testsuite><testcase name="a" time="{ok}"/></testsuite>"#);
            assert_eq!(names(x.as_bytes()).2, None, "{ok:?}");
        }
        // Cases kettle does not read never fail the build.
        let (_, _, fails) =
            names(br#"<testsuites><testsuite name="s"><testsuite><testcase name="a" time="x"/></testsuite></testsuite></testsuites>"#);
        assert_eq!(fails, None);
    }
    #[test]
    fn a_time_that_is_not_a_duration_is_the_files_problem() {
        for (bad, why) in [
            ("1e400", "not finite"),
            ("inf", "not finite"),
            ("-Infinity", "not finite"),
            ("NaN", "not a number"),
            ("-3", "negative"),
            ("1e300", "longer than 7 days"),
            ("9223372036854775807", "longer than 7 days"),
            ("1.5s", "not a number"),
        ] {
            let x = format!(
                r#"<testsuite><testcase name="ok" time="2.5"/><testcase name="slow &amp; odd" time="{bad}"><failure>x</failure></testcase><testcase name="after" time="1"/></testsuite>"#
            );
            let f = parse_junit(x.as_bytes(), "artifacts/junit_01.xml");
            let p = f.problem.as_deref().unwrap_or_else(|| panic!("{bad}: no problem"));
            assert!(p.starts_with("artifacts/junit_01.xml: "), "{p}");
            assert!(p.contains(r#"test case "slow & odd""#), "{p}");
            assert!(p.contains(&format!("time={bad:?}")), "the value as written: {p}");
            assert!(p.contains(why), "{bad}: {p}");
            // The rest of the file is read; the bad value becomes no figure at all.
            let times: Vec<_> = f.cases.iter().map(|c| (c.name.as_str(), c.time)).collect();
            assert_eq!(times, [("ok", Some(2.5)), ("slow & odd", None), ("after", Some(1.0))], "{bad}");
            assert_eq!(f.cases[1].status, Status::Failed);
            // Kettle reads the file all the same (its figures do not change).
            assert_eq!(f.kettle_rejects, None, "{bad}");
            assert!(f.cases.iter().all(|c| c.kettle_name.is_some()), "{bad}");
        }
        // Missing or empty times, and real ones, are no problem.
        let f = parse_junit(
            br#"<testsuite><testcase name="a"/><testcase name="b" time=""/><testcase name="c" time=" 0 "/><testcase name="d" time="604800"/></testsuite>"#,
            "j.xml",
        );
        assert_eq!(f.problem, None);
        // Several: the first is named, the others counted; a structural problem comes first.
        let f = parse_junit(
            br#"<testsuite><testcase name="a" time="-1"/><testcase name="b" time="nan"/><testcase name="c" time="1e999""#,
            "j.xml",
        );
        let p = f.problem.unwrap();
        assert!(p.starts_with("j.xml: malformed XML") || p.starts_with("j.xml: truncated"), "{p}");
        assert!(p.contains(r#"test case "a" has time="-1""#) && p.contains("(and 1 more test case(s)"), "{p}");
        // A long value is cut when shown.
        let long = "9".repeat(10_000);
        let f =
            parse_junit(format!(r#"<testsuite><testcase name="a" time="{long}"/></testsuite>"#).as_bytes(), "j.xml");
        let p = f.problem.unwrap();
        assert!(p.len() < 400 && p.contains("..."), "{p}");
    }
}

#[cfg(test)]
mod bounded_tests {
    use super::*;
    use std::io::Read;

    fn through(doc: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        Bounded::new(doc).read_to_end(&mut out).unwrap();
        out
    }

    /// The longest stretch between two markup starts: what one event of the XML
    /// reader may hold.
    fn longest_run(doc: &[u8]) -> usize {
        doc.split(|&b| b == b'<').map(<[u8]>::len).max().unwrap_or(0)
    }

    #[test]
    fn long_text_cdata_and_comments_come_in_pieces_with_the_same_meaning() {
        let big = |c: &str| {
            let mut s = String::new();
            while s.len() < 3 * MAX_PIECE {
                s.push_str(c);
                s.push_str(" é &amp; line\n");
            }
            s
        };
        let (text, cdata, comment) = (big("text"), big("cdata").replace("&amp;", "&"), big("comment"));
        let doc = format!(
            "<?xml version=\"1.0\"?>\n<testsuite name=\"s\">\n<testcase name=\"a\"><failure message=\"m\">{text}</failure></testcase>\n\
             <testcase name=\"b\"><error><![CDATA[{cdata}]]></error><system-out>{text}</system-out></testcase>\n<!--{comment}-->\n\
             <testcase name=\"c\"/>\n</testsuite>\n"
        );
        let piecewise = through(doc.as_bytes());
        assert!(piecewise.len() > doc.len(), "nothing was split");
        assert!(longest_run(&piecewise) <= MAX_PIECE + 64, "a run of {} bytes", longest_run(&piecewise));
        assert_eq!(memchr::memchr_iter(b'\n', &piecewise).count(), memchr::memchr_iter(b'\n', doc.as_bytes()).count());

        let f = read_junit_with(doc.as_bytes(), "big.xml", ReadOptions { system_out: true });
        assert_eq!(f.problem, None);
        assert_eq!(f.kettle_rejects, None);
        let names: Vec<&str> = f.cases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        // Texts are whole again (head and tail kept as for any long text), lines intact.
        let unescaped = text.replace("&amp;", "&");
        assert_eq!(
            f.cases[0].failure_text.as_deref(),
            Some(cap(format!("m\n{}", unescaped.trim_matches('\n'))).as_str())
        );
        assert_eq!(f.cases[1].failure_text.as_deref(), Some(cap(cdata.trim_matches('\n').to_string()).as_str()));
        assert_eq!(f.cases[1].system_out.as_deref(), Some(cap(unescaped.clone()).as_str()));
        let line_c = doc.lines().position(|l| l.starts_with("<testcase name=\"c\"")).unwrap() as u32 + 1;
        assert_eq!(f.cases[2].line, line_c);
    }

    #[test]
    fn small_documents_pass_unchanged_and_huge_tags_are_refused() {
        let doc = br#"<testsuite><testcase name="x &amp; y" time="1"><failure><![CDATA[a]]b]]></failure></testcase><!-- c --></testsuite>"#;
        assert_eq!(through(doc), doc.to_vec());
        let mut huge = b"<testsuite><testcase name=\"ok\"/><testcase name=\"".to_vec();
        huge.resize(huge.len() + MAX_TAG, b'n');
        huge.extend_from_slice(b"\"/></testsuite>");
        let f = parse_junit(&huge, "huge.xml");
        assert_eq!(f.cases.len(), 1, "the case before the huge tag is kept");
        let p = f.problem.expect("a problem");
        assert!(p.starts_with("huge.xml: ") && p.contains("a tag longer than 8 MiB"), "{p}");
    }
}
