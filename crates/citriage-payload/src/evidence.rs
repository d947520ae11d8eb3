//! Failure evidence of job runs: plain data (failing tests, cited log lines,
//! aggregated-run verdicts) and the [`EvidenceProvider`] trait the analysis asks
//! for it. Providers here: [`GcsMirror`] (a local mirror of the GCS buckets,
//! `<root>/<bucket>/logs/<job>/<id>/...`), [`StaticEvidence`] (in memory) and
//! [`FirstOf`] (try several). The payload-snapshot layout has its own provider in
//! [`crate::snapshot`].
//!
//! Every test failure and log line carries its [`Location`]: the artifact file,
//! its URL when known, and a 1-based line number.

use std::collections::BTreeMap;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::aggregated::{self, AggregatedTest};
use crate::error::PayloadError;
use crate::junit::{self, CaseStatus, JunitCase};
use citriage_model::time::Epoch;

/// The evidence is made of the suspect engine's cited lines: the failure side
/// the links quote.
pub use citriage_suspects::lines::{Location, LogLine};

/// Signature / class supplied by an external classifier (the shared signature code).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SignatureHint {
    pub id: String,
    /// `product`, `infra`, `ci-config`, `flake`...
    pub class: Option<String>,
    pub label: Option<String>,
}

/// How a failing test counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum TestKind {
    /// Failed everywhere in the run and gates (no informing lifecycle).
    Failure,
    /// `lifecycle="informing"`: cannot fail the job.
    Informing,
    /// Failed and passed in the same run: cannot fail the job.
    Flake,
}

/// One failing test of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestFailure {
    pub name: String,
    pub suite: String,
    /// First line of the failure (message attribute, else first body line).
    pub message: String,
    /// Full failure text (message + body), bounded.
    pub text: String,
    pub kind: TestKind,
    /// A CI step of the job graph (`Run multi-stage test ... container test`), not a product test.
    pub is_step: bool,
    pub at: Location,
    pub hint: Option<SignatureHint>,
}

/// What was found of a run's JUnit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum JunitState {
    /// Every JUnit file read.
    Found { files: u32 },
    /// Some files unreadable: counts are a lower bound.
    Partial { files: u32, problems: Vec<String> },
    /// No JUnit file at all: the tests may never have run (unknown, not green).
    Missing,
    /// Files exist but none parsed.
    Unparseable { problems: Vec<String> },
    /// Files were read but hold no test case at all (an empty `results.json`):
    /// nothing is known about the tests.
    Empty { files: u32 },
}

impl JunitState {
    /// True when at least one JUnit file was read.
    pub fn readable(&self) -> bool {
        matches!(self, JunitState::Found { .. } | JunitState::Partial { .. })
    }
}

/// Everything known about one run's failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunEvidence {
    pub prow_url: String,
    /// Start time (started.json), when known.
    pub started: Option<Epoch>,
    /// Completion time (finished.json), when known.
    pub finished: Option<Epoch>,
    /// `SUCCESS` / `FAILURE` / ... from finished.json.
    pub result: Option<String>,
    pub junit: JunitState,
    /// Test cases read (all statuses).
    pub tests_total: u32,
    /// Failing tests: gating failures, informing tests and flakes (see `kind`).
    pub failures: Vec<TestFailure>,
    /// Error-looking lines of the build log, in log order.
    pub log_lines: Vec<LogLine>,
    /// The last lines of the build log whatever their level, for context only
    /// (which step failed, which test binaries were being listed); never cited
    /// as evidence of a cause.
    pub context: Vec<LogLine>,
    /// The failing CI step named by the build log (`Step e2e-aws-ipi-install failed ...`).
    pub failed_step: Option<String>,
    /// Aggregated jobs: the tests of `junit-aggregated.xml`.
    pub aggregated: Vec<AggregatedTest>,
    /// A job-level signature / class from an external classifier.
    pub hint: Option<SignatureHint>,
    /// What could not be read of the run and why (an object name refused, a folder
    /// not listed, a log too large), each naming the file; the analysis records them
    /// as data gaps.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

impl RunEvidence {
    /// An empty record for a URL.
    pub fn empty(prow_url: &str) -> RunEvidence {
        RunEvidence {
            prow_url: prow_url.to_string(),
            started: None,
            finished: None,
            result: None,
            junit: JunitState::Missing,
            tests_total: 0,
            failures: Vec::new(),
            log_lines: Vec::new(),
            context: Vec::new(),
            failed_step: None,
            aggregated: Vec::new(),
            hint: None,
            problems: Vec::new(),
        }
    }

    /// The gating failures.
    pub fn gating(&self) -> impl Iterator<Item = &TestFailure> {
        self.failures.iter().filter(|f| f.kind == TestKind::Failure)
    }
}

/// Supplies failure evidence for a Prow run.
pub trait EvidenceProvider {
    /// Evidence of the run at `prow_url`; `Ok(None)` when the provider has nothing for it.
    fn run_evidence(&self, prow_url: &str) -> Result<Option<RunEvidence>, PayloadError>;
}

/// A provider with no evidence at all.
pub struct NoEvidence;

impl EvidenceProvider for NoEvidence {
    fn run_evidence(&self, _prow_url: &str) -> Result<Option<RunEvidence>, PayloadError> {
        Ok(None)
    }
}

/// Evidence held in memory, by Prow URL.
#[derive(Default)]
pub struct StaticEvidence(pub BTreeMap<String, RunEvidence>);

impl EvidenceProvider for StaticEvidence {
    fn run_evidence(&self, prow_url: &str) -> Result<Option<RunEvidence>, PayloadError> {
        Ok(self.0.get(prow_url).cloned())
    }
}

/// Asks each provider in turn; the first that has evidence wins.
pub struct FirstOf(pub Vec<Box<dyn EvidenceProvider>>);

impl EvidenceProvider for FirstOf {
    fn run_evidence(&self, prow_url: &str) -> Result<Option<RunEvidence>, PayloadError> {
        for p in &self.0 {
            if let Some(e) = p.run_evidence(prow_url)? {
                return Ok(Some(e));
            }
        }
        Ok(None)
    }
}

/// True for the CI job-graph steps OpenShift writes to `junit_operator.xml`.
pub fn is_step_name(name: &str) -> bool {
    name.starts_with("Run multi-stage test")
        || name.ends_with(" container test")
        || name.starts_with("Import the release payload")
        || name.starts_with("Find the input image")
        || name.starts_with("Build image ")
        || name.starts_with("Create the release image")
}

fn first_line(s: &str) -> String {
    s.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("").chars().take(600).collect()
}

/// Turns JUnit cases (with the file each came from) into failing tests, applying
/// the gating rules: a test that failed and passed in the run is a flake, one with
/// `lifecycle="informing"` is informing, anything else that failed gates.
pub fn failures_from_cases(files: &[(Location, Vec<JunitCase>)]) -> (Vec<TestFailure>, u32) {
    let mut passed: BTreeMap<(String, String), bool> = BTreeMap::new();
    let mut total = 0u32;
    for (_, cases) in files {
        for c in cases {
            total += 1;
            if c.status == CaseStatus::Passed {
                passed.insert((c.suite.clone(), c.name.clone()), true);
            }
        }
    }
    let mut out: Vec<TestFailure> = Vec::new();
    let mut seen: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (loc, cases) in files {
        for c in cases {
            if !matches!(c.status, CaseStatus::Failed | CaseStatus::Error) || c.name.trim().is_empty() {
                continue;
            }
            let key = (c.suite.clone(), c.name.clone());
            if seen.contains_key(&key) {
                continue;
            }
            let kind = if passed.contains_key(&key) {
                TestKind::Flake
            } else if c.informing {
                TestKind::Informing
            } else {
                TestKind::Failure
            };
            let text: String = strip_ansi(&c.failure_text()).chars().take(16 * 1024).collect();
            let message =
                strip_ansi(&if c.message.trim().is_empty() { first_line(&c.body) } else { first_line(&c.message) })
                    .into_owned();
            seen.insert(key, out.len());
            out.push(TestFailure {
                name: c.name.clone(),
                suite: c.suite.clone(),
                message,
                text,
                kind,
                is_step: is_step_name(&c.name),
                at: Location { file: loc.file.clone(), url: loc.url.clone(), line: Some(c.line) },
                hint: None,
            });
        }
    }
    (out, total)
}

/// The state of a run's JUnit from what was read: XML files parsed, files
/// present, `results.json` files read and the entries they held, problems.
pub fn junit_state(
    xml_parsed: u32,
    files_present: usize,
    results_read: u32,
    results_entries: usize,
    problems: Vec<String>,
) -> JunitState {
    let read = xml_parsed + u32::from(results_entries > 0) * results_read;
    if files_present == 0 {
        JunitState::Missing
    } else if read == 0 && results_read > 0 && problems.is_empty() {
        JunitState::Empty { files: results_read }
    } else if read == 0 {
        JunitState::Unparseable { problems }
    } else if problems.is_empty() {
        JunitState::Found { files: read }
    } else {
        JunitState::Partial { files: read, problems }
    }
}

/// Reads a `results.json` (the payload-snapshot export of a run's JUnit: one
/// object per failing test with `name`, `status`, `suite_name`,
/// `failure_message`, `failure_text`, `lifecycle` and, for aggregated jobs,
/// `aggregated: {passes, failures, skips}`) into `ev`, beside what the JUnit XML
/// gave: a test already read from XML is not added again (the XML knows whether
/// it also passed), aggregated tests already read are kept. Returns how many
/// entries the file held.
pub fn merge_results_json(
    ev: &mut RunEvidence,
    v: &serde_json::Value,
    loc: &Location,
    xml_names: &std::collections::BTreeSet<String>,
) -> usize {
    let Some(entries) = v.as_array() else { return 0 };
    for t in entries {
        let name = field(t, "name");
        if name.is_empty() {
            continue;
        }
        let message = first_field(t, "failure_message", "error_message");
        if let Some(agg) = t.get("aggregated").filter(|a| a.is_object()) {
            if !ev.aggregated.iter().any(|a| a.name == name) {
                ev.aggregated.push(aggregated_entry(t, agg, name, &message));
            }
            continue;
        }
        if xml_names.contains(&name) || ev.failures.iter().any(|f| f.name == name) {
            continue;
        }
        if let Some(f) = failure_entry(t, name, message, loc) {
            ev.failures.push(f);
        }
    }
    entries.len()
}

/// A string field of a `results.json` entry (empty when absent).
fn field(t: &serde_json::Value, k: &str) -> String {
    t.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string()
}

/// The first of two fields that is not empty.
fn first_field(t: &serde_json::Value, a: &str, b: &str) -> String {
    let first = field(t, a);
    if first.is_empty() {
        field(t, b)
    } else {
        first
    }
}

/// The underlying runs of an aggregated entry's `passes` / `failures` / `skips`.
fn underlying_runs(x: Option<&serde_json::Value>) -> Vec<aggregated::UnderlyingRun> {
    x.and_then(|a| a.as_array())
        .into_iter()
        .flatten()
        .map(|r| {
            let human = field(r, "humanurl");
            aggregated::UnderlyingRun {
                job_run_id: field(r, "jobrunid"),
                job: crate::release::prow_job_from_url(&human),
                human_url: human,
                gcs_artifact_url: field(r, "gcsartifacturl"),
            }
        })
        .collect()
}

/// An aggregated test of `results.json`.
fn aggregated_entry(t: &serde_json::Value, agg: &serde_json::Value, name: String, message: &str) -> AggregatedTest {
    AggregatedTest {
        name,
        suite: field(t, "suite_name"),
        failed: matches!(field(t, "status").as_str(), "failed" | "error"),
        informing: field(t, "lifecycle") == "informing"
            || field(t, "test_lifecycle") == "informing"
            || aggregated::is_non_blocking(message),
        verdict: aggregated::parse_verdict(message),
        passes: underlying_runs(agg.get("passes")),
        failures: underlying_runs(agg.get("failures")),
        skips: underlying_runs(agg.get("skips")),
        incomplete: Vec::new(),
        line: 0,
        problem: None,
    }
}

/// A failed, flaky or informing test of `results.json` (`None` for any other status).
fn failure_entry(t: &serde_json::Value, name: String, message: String, loc: &Location) -> Option<TestFailure> {
    let status = field(t, "status");
    let kind = if status == "flake" || status == "flaky" {
        TestKind::Flake
    } else if field(t, "test_lifecycle") == "informing"
        || field(t, "lifecycle") == "informing"
        || aggregated::is_non_blocking(&message)
    {
        TestKind::Informing
    } else if matches!(status.as_str(), "failed" | "error" | "failure" | "") {
        TestKind::Failure
    } else {
        return None;
    };
    let body = first_field(t, "failure_text", "error_text");
    let text = if message.is_empty() {
        body.clone()
    } else if body.is_empty() {
        message.clone()
    } else if body.starts_with(&message) {
        body.clone()
    } else {
        format!("{message}\n{body}")
    };
    let first = if message.trim().is_empty() { first_line(&body) } else { first_line(&message) };
    Some(TestFailure {
        is_step: is_step_name(&name),
        name,
        suite: field(t, "suite_name"),
        message: strip_ansi(&first).into_owned(),
        text: strip_ansi(&text).chars().take(16 * 1024).collect(),
        kind,
        at: loc.clone(),
        hint: None,
    })
}

/// Removes ANSI escape sequences (colors, cursor moves) from a line.
pub fn strip_ansi(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains('\u{1b}') {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'[') {
            chars.next();
            // Parameters and intermediates up to the final byte (@..~).
            for d in chars.by_ref() {
                if ('@'..='~').contains(&d) {
                    break;
                }
            }
        } else {
            chars.next();
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Build-log lines worth citing: Prow's error highlights and step failures.
pub struct LogScanner {
    re: Regex,
    step: Regex,
}

impl Default for LogScanner {
    fn default() -> Self {
        LogScanner {
            re: Regex::new(
                r"(?x)
                (?:\b(?:Error|ERROR|error)s?:)
              | \b(?:FAIL|FAILED|Failure\ \[)\b
              | \bpanic\b | fatal\ error | DATA\ RACE | [Tt]imed\ out | timed\ out
              | Process\ did\ not\ finish\ before | signal:\ killed | [Uu]nexpected\ error
              | level=(?:error|fatal) | ^E\d{4}\ \d\d:\d\d:\d\d | \bforbidden\b
              | LimitExceeded | QuotaExceeded | could\ not\ allocate | unknown\ flag
              | flag\ provided\ but\ not\ defined | command\ not\ found | connection\ refused
              | Step\ \S+\ failed | \[FAILED\]",
            )
            .unwrap(),
            step: Regex::new(r#"(?:Step|step) "?([A-Za-z0-9][\w.-]*)"? failed"#).unwrap(),
        }
    }
}

/// What a scan of a build log found.
#[derive(Debug, Clone, Default)]
pub struct LogScan {
    /// Error lines (not info-level), the first `limit`.
    pub lines: Vec<LogLine>,
    /// The failing step named by the log.
    pub step: Option<String>,
    /// The last lines of the log, any level.
    pub tail: Vec<LogLine>,
}

/// Lines of the log's end kept as context.
pub const TAIL_LINES: usize = 300;

impl LogScanner {
    /// Scans a log text; at most `limit` error lines are kept (the first ones),
    /// and the last [`TAIL_LINES`] lines as context.
    pub fn scan(&self, text: &str, file: &str, url: Option<&str>, limit: usize) -> LogScan {
        // Reading from memory cannot fail.
        self.scan_reader(text.as_bytes(), file, url, limit, usize::MAX).unwrap_or_default()
    }

    /// Scans a log read as a stream, line by line, as [`LogScanner::scan`] scans its
    /// text (lines end at `\n`, a `\r` before it is dropped, invalid UTF-8 is
    /// replaced line by line): only the kept lines and one line at a time are held.
    /// A line longer than `max_line_bytes` is matched and kept on its first
    /// `max_line_bytes` bytes (the rest is skipped, not held).
    pub fn scan_reader(
        &self,
        mut input: impl BufRead,
        file: &str,
        url: Option<&str>,
        limit: usize,
        max_line_bytes: usize,
    ) -> std::io::Result<LogScan> {
        let mut out = LogScan::default();
        let mut tail: std::collections::VecDeque<LogLine> = std::collections::VecDeque::new();
        let at = |i: usize| Location { file: file.to_string(), url: url.map(str::to_string), line: Some(i as u32 + 1) };
        let mut buf = Vec::new();
        let mut i = 0usize;
        while read_line_bounded(&mut input, &mut buf, max_line_bytes)? {
            let raw = String::from_utf8_lossy(&buf);
            let l = strip_ansi(&raw);
            let l = l.as_ref();
            if tail.len() == TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(LogLine { text: l.trim_end().chars().take(1000).collect(), at: at(i) });
            if out.step.is_none() {
                if let Some(c) = self.step.captures(l) {
                    out.step = Some(c[1].to_string());
                }
            }
            if self.re.is_match(l) && !crate::lines::is_info_line(l) && out.lines.len() < limit {
                out.lines.push(LogLine { text: l.trim_end().chars().take(1000).collect(), at: at(i) });
            }
            i += 1;
        }
        out.tail = tail.into_iter().collect();
        Ok(out)
    }
}

/// Reads the next line of `input` into `buf` (cleared first) without its `\n` (and
/// the `\r` before it): at most `max` bytes of it are kept, the rest of a longer
/// line is read past. `false` at the end of the input.
fn read_line_bounded(input: &mut impl BufRead, buf: &mut Vec<u8>, max: usize) -> std::io::Result<bool> {
    buf.clear();
    let mut any = false;
    loop {
        let chunk = match input.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(any);
        }
        any = true;
        let (piece, used, ended) = match chunk.iter().position(|&b| b == b'\n') {
            Some(n) => (&chunk[..n], n + 1, true),
            None => (chunk, chunk.len(), false),
        };
        let room = max.saturating_sub(buf.len());
        buf.extend_from_slice(&piece[..piece.len().min(room)]);
        input.consume(used);
        if ended {
            // A `\r` ending the line is dropped, as `str::lines` drops it (only when
            // the line was kept whole: a cut line keeps what it kept).
            if buf.len() < max && buf.last() == Some(&b'\r') {
                buf.pop();
            }
            return Ok(true);
        }
    }
}

/// Inflates gzip content (detected by magic bytes); passes anything else through.
pub fn maybe_gunzip(raw: Vec<u8>, origin: &str) -> Result<Vec<u8>, PayloadError> {
    if raw.len() >= 2 && raw[0] == 0x1f && raw[1] == 0x8b {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .map_err(|e| PayloadError::invalid(origin, format!("gzip data is corrupt or truncated: {e}")))?;
        Ok(out)
    } else {
        Ok(raw)
    }
}

/// The `<bucket>/<path>` of a Prow view URL, a `gs://` URL, a storage URL or a gcsweb URL.
pub fn gcs_path_of(url: &str) -> Option<String> {
    let u = url.split(['?', '#']).next().unwrap_or(url).trim_end_matches('/');
    for marker in ["/view/gs/", "gs://", "storage.googleapis.com/", "/gcs/"] {
        if let Some(i) = u.find(marker) {
            let rest = &u[i + marker.len()..];
            if rest.split('/').count() >= 2 && !rest.contains("..") {
                return Some(rest.to_string());
            }
        }
    }
    None
}

/// One folder of a run as listed: its files (names relative to the run folder, with
/// their size when the listing gives one) and sub-folders (relative, ending in `/`),
/// each in name order, and the names refused (each a problem naming it and why).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunListing {
    pub files: Vec<(String, Option<u64>)>,
    pub folders: Vec<String>,
    pub refused: Vec<String>,
}

/// A run's folder of artifacts, wherever it is kept: a local mirror ([`GcsMirror`])
/// or a bucket read over HTTP (a provider of the application, which holds the HTTP
/// client). [`read_run`] reads a run's evidence through it, so every provider finds
/// the same evidence in the same files within the same bounds.
pub trait RunFolder {
    /// The direct children of `rel`: `""` for the run folder, else a sub-folder
    /// (relative to the run folder, ending in `/`). A folder that does not exist is empty.
    fn list(&self, rel: &str) -> Result<RunListing, PayloadError>;
    /// Opens a file of the run as a stream (gzip content inflated as it is read,
    /// within the source's size limit and memory budget); `Ok(None)` when it does not exist.
    fn open(&self, rel: &str) -> Result<Option<Box<dyn BufRead + Send>>, PayloadError>;
    /// Where a file is, for messages (a path or URL).
    fn origin(&self, rel: &str) -> String;
}

/// What is read of one run, at most.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunLimits {
    /// Error lines of the build log kept (the first ones).
    pub max_log_lines: usize,
    /// A build log listed larger than this is not read (a problem says so).
    pub max_log_bytes: u64,
    /// Lines of the build log are matched and kept on this many bytes at most.
    pub max_line_bytes: usize,
    /// `started.json`, `finished.json` and `results.json` larger than this are not read.
    pub max_json_bytes: u64,
    /// Folders below `artifacts/` descended at most this deep.
    pub max_depth: usize,
    /// No further folder is listed once more than this many JUnit files were found.
    pub max_junit_files: usize,
    /// Folders listed per run at most (each is one request over HTTP); a problem
    /// says when the walk stopped there.
    pub max_folders: usize,
}

impl Default for RunLimits {
    fn default() -> Self {
        RunLimits {
            max_log_lines: 400,
            max_log_bytes: 256 << 20,
            max_line_bytes: 256 << 10,
            max_json_bytes: 64 << 20,
            max_depth: 10,
            max_junit_files: 500,
            max_folders: 5000,
        }
    }
}

/// True for the file names read as JUnit: `junit*.xml`, `junit*.xml.gz`, `results.json`.
pub fn is_junit_name(name: &str) -> bool {
    (name.starts_with("junit") && (name.ends_with(".xml") || name.ends_with(".xml.gz"))) || name == "results.json"
}

/// The JUnit files of a run (relative paths, in the order of a walk in name order):
/// those in the run folder and below `artifacts/`, within `limits`; problems for
/// refused names and a walk cut short.
fn junit_files(
    folder: &dyn RunFolder,
    root: &RunListing,
    limits: &RunLimits,
    problems: &mut Vec<String>,
) -> Result<Vec<String>, PayloadError> {
    struct Walk<'a> {
        folder: &'a dyn RunFolder,
        limits: &'a RunLimits,
        out: Vec<String>,
        listed: usize,
        cut: Option<String>,
    }
    impl Walk<'_> {
        fn visit(&mut self, l: &RunListing, depth: usize, problems: &mut Vec<String>) -> Result<(), PayloadError> {
            // Files and folders together in name order (a folder by its name without `/`).
            let mut entries: Vec<(&str, bool)> = l
                .files
                .iter()
                .map(|(f, _)| (f.as_str(), false))
                .chain(l.folders.iter().map(|d| (d.trim_end_matches('/'), true)))
                .collect();
            entries.sort();
            for (rel, is_dir) in entries {
                let name = rel.rsplit('/').next().unwrap_or(rel);
                if !is_dir {
                    if is_junit_name(name) {
                        self.out.push(rel.to_string());
                    }
                    continue;
                }
                if (depth == 0 && name != "artifacts") || depth + 1 > self.limits.max_depth {
                    continue;
                }
                if self.out.len() > self.limits.max_junit_files {
                    continue;
                }
                if self.listed >= self.limits.max_folders {
                    self.cut.get_or_insert_with(|| format!("{rel}/"));
                    continue;
                }
                self.listed += 1;
                let sub = self.folder.list(&format!("{rel}/"))?;
                problems.extend(sub.refused.iter().cloned());
                self.visit(&sub, depth + 1, problems)?;
            }
            Ok(())
        }
    }
    let mut w = Walk { folder, limits, out: Vec::new(), listed: 0, cut: None };
    w.visit(root, 0, problems)?;
    if let Some(first) = w.cut {
        problems.push(format!(
            "{}: the run's folders were listed up to the limit of {}; {first} and the folders after it were not searched for JUnit",
            folder.origin(""),
            limits.max_folders
        ));
    }
    Ok(w.out)
}

/// A stream that remembers the first source error it passed on (the source could not
/// give the object to its end: a transfer cut for good, corrupt gzip, a size limit),
/// which a reader that keeps going after an I/O error (the JUnit reader) would
/// otherwise turn into a problem of the file.
struct Tap {
    inner: Box<dyn BufRead + Send>,
    failed: std::sync::Arc<std::sync::Mutex<Option<citriage_sources::SourceError>>>,
}

/// `e` for the reader; the source's error it carries is kept in `failed`.
fn noted(failed: &std::sync::Mutex<Option<citriage_sources::SourceError>>, e: std::io::Error) -> std::io::Error {
    match citriage_sources::source_error(e) {
        Ok(se) => {
            let message = se.to_string();
            failed.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(se);
            std::io::Error::other(message)
        }
        Err(e) => e,
    }
}

impl Read for Tap {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf).map_err(|e| noted(&self.failed, e))
    }
}

impl BufRead for Tap {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        match self.inner.fill_buf() {
            Ok(b) => Ok(b),
            Err(e) => Err(noted(&self.failed, e)),
        }
    }
    fn consume(&mut self, n: usize) {
        self.inner.consume(n)
    }
}

/// An I/O error of a stream read from `origin`, in this crate's terms: the source's
/// own error when it carries one (transient or not, as the source says), else
/// invalid input naming the file.
fn stream_error(origin: String, e: std::io::Error) -> PayloadError {
    match citriage_sources::source_error(e) {
        Ok(se) => se.into(),
        Err(e) => PayloadError::invalid(origin, e.to_string()),
    }
}

/// Reads a small file whole (at most `limit` bytes, counted against the process's
/// memory budget while held); `Ok(None)` when absent, an error naming it when larger.
fn read_small(folder: &dyn RunFolder, rel: &str, limit: u64) -> Result<Option<Vec<u8>>, PayloadError> {
    let Some(mut r) = folder.open(rel)? else { return Ok(None) };
    let origin = folder.origin(rel);
    match citriage_sources::http::read_counted(&mut r, limit, None) {
        Ok(b) => Ok(Some(b.into_vec())),
        Err(citriage_sources::http::ReadLimit::TooLarge { limit }) => {
            Err(PayloadError::invalid(origin, format!("larger than the {limit}-byte limit; not read")))
        }
        Err(citriage_sources::http::ReadLimit::OverBudget { budget }) => Err(PayloadError::invalid(
            origin,
            format!("larger than the process's memory budget for bodies in flight ({budget} bytes)"),
        )),
        Err(citriage_sources::http::ReadLimit::Io(e)) => Err(stream_error(origin, e)),
    }
}

/// The evidence of one run read through `folder`: `started.json`, `finished.json`,
/// the build log (`build-log.txt`, else `build-log.txt.gz`; streamed, its first
/// error lines and last lines kept) and every JUnit file of the run folder and below
/// `artifacts/` (streamed), in name order. `gpath` is the run's `<bucket>/<path>`:
/// cited files' URLs are `<url_base>/<gpath>/<file>`.
pub fn read_run(
    prow_url: &str,
    gpath: &str,
    url_base: &str,
    folder: &dyn RunFolder,
    scanner: &LogScanner,
    limits: &RunLimits,
) -> Result<RunEvidence, PayloadError> {
    let root = folder.list("")?;
    let reading =
        RunReading { folder, limits, base: format!("{}/{}", url_base.trim_end_matches('/'), gpath), root: &root };
    let mut ev = RunEvidence::empty(prow_url);
    let mut problems: Vec<String> = root.refused.clone();
    if let Some(v) = reading.json("started.json")? {
        ev.started = v.get("timestamp").and_then(|t| t.as_i64());
    }
    if let Some(v) = reading.json("finished.json")? {
        ev.finished = v.get("timestamp").and_then(|t| t.as_i64());
        ev.result = v.get("result").and_then(|r| r.as_str()).map(str::to_string);
    }
    reading.build_log(scanner, &mut ev, &mut problems)?;
    let files = junit_files(folder, &root, limits, &mut problems)?;
    let mut junit_problems = Vec::new();
    let (xml, results): (Vec<&String>, Vec<&String>) = files.iter().partition(|rel| !rel.ends_with("results.json"));
    let parsed = reading.junit_xml(&xml, &mut ev, &mut junit_problems)?;
    let (failures, total) = failures_from_cases(&parsed);
    ev.failures = failures;
    ev.tests_total = total;
    let xml_names: std::collections::BTreeSet<String> =
        parsed.iter().flat_map(|(_, cases)| cases.iter().map(|c| c.name.clone())).collect();
    let (results_read, results_entries) = reading.results_json(&results, &xml_names, &mut ev, &mut junit_problems)?;
    ev.junit = junit_state(parsed.len() as u32, files.len(), results_read, results_entries, junit_problems);
    ev.problems = problems;
    Ok(ev)
}

/// One run folder being read: its listing, its limits, the URL its files are cited by.
struct RunReading<'a> {
    folder: &'a dyn RunFolder,
    limits: &'a RunLimits,
    /// `<url base>/<gcs path>`: a file's URL is this and its relative name.
    base: String,
    root: &'a RunListing,
}

impl RunReading<'_> {
    fn url_of(&self, rel: &str) -> String {
        format!("{}/{}", self.base, rel)
    }

    fn listed(&self, name: &str) -> Option<Option<u64>> {
        self.root.files.iter().find(|(f, _)| f == name).map(|(_, size)| *size)
    }

    /// A small JSON file of the run's root, when listed.
    fn json(&self, name: &str) -> Result<Option<serde_json::Value>, PayloadError> {
        if self.listed(name).is_none() {
            return Ok(None);
        }
        let Some(b) = read_small(self.folder, name, self.limits.max_json_bytes)? else { return Ok(None) };
        serde_json::from_slice(&b)
            .map(Some)
            .map_err(|e| PayloadError::invalid(self.folder.origin(name), format!("malformed JSON: {e}")))
    }

    /// The build log (plain or gzip), streamed: its error lines, failed step and tail.
    fn build_log(
        &self,
        scanner: &LogScanner,
        ev: &mut RunEvidence,
        problems: &mut Vec<String>,
    ) -> Result<(), PayloadError> {
        let limits = self.limits;
        for name in ["build-log.txt", "build-log.txt.gz"] {
            let Some(size) = self.listed(name) else { continue };
            if let Some(size) = size.filter(|s| *s > limits.max_log_bytes) {
                problems.push(format!(
                    "{}: {size} bytes, larger than the {}-byte limit for build logs; not read",
                    self.folder.origin(name),
                    limits.max_log_bytes
                ));
                break;
            }
            let Some(r) = self.folder.open(name)? else { continue };
            let scan = scanner
                .scan_reader(
                    r,
                    "build-log.txt",
                    Some(&self.url_of("build-log.txt")),
                    limits.max_log_lines,
                    limits.max_line_bytes,
                )
                .map_err(|e| stream_error(self.folder.origin(name), e))?;
            ev.log_lines = scan.lines;
            ev.failed_step = scan.step;
            ev.context = scan.tail;
            break;
        }
        Ok(())
    }

    /// The JUnit XML files, each streamed; aggregated tests of `junit-aggregated.xml` into `ev`.
    fn junit_xml(
        &self,
        files: &[&String],
        ev: &mut RunEvidence,
        problems: &mut Vec<String>,
    ) -> Result<Vec<(Location, Vec<JunitCase>)>, PayloadError> {
        let mut parsed = Vec::new();
        for rel in files {
            let Some(r) = self.folder.open(rel)? else { continue };
            let failed = std::sync::Arc::new(std::sync::Mutex::new(None));
            let f = junit::parse_junit_reader(Tap { inner: r, failed: failed.clone() }, rel);
            let failed = failed.lock().unwrap_or_else(|p| p.into_inner()).take();
            if let Some(se) = failed {
                // The file could not be read to its end: what was parsed of it is
                // dropped. A transient failure fails the run's evidence (read again
                // later); one that is the file's (corrupt gzip, too large) is its problem.
                let e = PayloadError::from(se);
                if !e.is_bad_input() {
                    return Err(e);
                }
                problems.push(format!("{rel}: {e}"));
                continue;
            }
            if let Some(p) = &f.problem {
                problems.push(p.clone());
            }
            if f.cases.is_empty() && f.problem.is_some() {
                continue;
            }
            if rel.ends_with("junit-aggregated.xml") {
                ev.aggregated.extend(aggregated::aggregated_tests(&f.cases));
            }
            parsed.push((Location { file: (*rel).clone(), url: Some(self.url_of(rel)), line: None }, f.cases));
        }
        Ok(parsed)
    }

    /// The `results.json` exports, merged beside the XML: how many were read and
    /// how many entries they held.
    fn results_json(
        &self,
        files: &[&String],
        xml_names: &std::collections::BTreeSet<String>,
        ev: &mut RunEvidence,
        problems: &mut Vec<String>,
    ) -> Result<(u32, usize), PayloadError> {
        let mut entries = 0usize;
        let mut read = 0u32;
        for rel in files {
            let raw = match read_small(self.folder, rel, self.limits.max_json_bytes) {
                Ok(Some(raw)) => raw,
                Ok(None) => continue,
                Err(e @ PayloadError::Invalid { .. }) => {
                    problems.push(e.to_string());
                    continue;
                }
                Err(e) => return Err(e),
            };
            match serde_json::from_slice::<serde_json::Value>(&raw) {
                Ok(v) => {
                    read += 1;
                    let loc = Location { file: (*rel).clone(), url: Some(self.url_of(rel)), line: None };
                    entries += merge_results_json(ev, &v, &loc, xml_names);
                }
                Err(e) => problems.push(format!("{rel}: malformed JSON: {e}")),
            }
        }
        Ok((read, entries))
    }
}

/// A local mirror of GCS buckets: the Prow URL `.../view/gs/<bucket>/logs/<job>/<id>`
/// maps to `<root>/<bucket>/logs/<job>/<id>/`, read by [`read_run`] for
/// `started.json`, `finished.json`, `build-log.txt` (gzip or plain) and every
/// `junit*.xml` under `artifacts/` (and the run root), in path order.
pub struct GcsMirror {
    root: PathBuf,
    scanner: LogScanner,
    /// Base of the browsable file URLs cited in evidence.
    pub url_base: String,
    /// What is read of a run at most.
    pub limits: RunLimits,
}

impl GcsMirror {
    /// A mirror rooted at `root` (the directory holding the bucket directories).
    pub fn new(root: impl Into<PathBuf>) -> GcsMirror {
        GcsMirror {
            root: root.into(),
            scanner: LogScanner::default(),
            url_base: "https://storage.googleapis.com".to_string(),
            limits: RunLimits::default(),
        }
    }

    /// The local directory of a run, if the URL maps into the mirror.
    pub fn run_dir(&self, prow_url: &str) -> Option<(PathBuf, String)> {
        let p = gcs_path_of(prow_url)?;
        let dir = p.split('/').fold(self.root.clone(), |acc, seg| acc.join(seg));
        Some((dir, p))
    }
}

/// A run's folder in a local mirror whose root resolves to `root`.
struct LocalRun<'a> {
    dir: &'a Path,
    root: PathBuf,
}

impl LocalRun<'_> {
    fn path(&self, rel: &str) -> PathBuf {
        rel.split('/').filter(|s| !s.is_empty()).fold(self.dir.to_path_buf(), |acc, seg| acc.join(seg))
    }
}

impl RunFolder for LocalRun<'_> {
    fn list(&self, rel: &str) -> Result<RunListing, PayloadError> {
        let dir = self.path(rel);
        let mut l = RunListing::default();
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(l),
            Err(source) => return Err(PayloadError::Io { path: dir.display().to_string(), source }),
        };
        for e in rd.flatten() {
            let Some(name) = e.file_name().to_str().map(str::to_string) else {
                l.refused.push(format!(
                    "{}: refused file name {:?}: not UTF-8",
                    dir.display(),
                    e.file_name().to_string_lossy()
                ));
                continue;
            };
            let r = format!("{rel}{name}");
            if let Err(why) = citriage_sources::paths::check_name(&r) {
                l.refused.push(format!("{}: {}", dir.display(), citriage_sources::paths::refusal(&r, why)));
                continue;
            }
            // Symlinks are not descended (a link to a file is read as a file), and
            // one leading out of the mirror (or nowhere) is refused.
            let ft = e.file_type().ok();
            if ft.is_some_and(|t| t.is_symlink())
                && !std::fs::canonicalize(e.path()).is_ok_and(|c| c.starts_with(&self.root))
            {
                let why = "a symlink leading out of the mirror (or nowhere)";
                l.refused.push(format!("{}: {}", dir.display(), citriage_sources::paths::refusal(&r, why)));
                continue;
            }
            if ft.is_some_and(|t| t.is_dir()) {
                l.folders.push(format!("{r}/"));
            } else {
                l.files.push((r, e.metadata().ok().map(|m| m.len())));
            }
        }
        l.files.sort();
        l.folders.sort();
        Ok(l)
    }

    fn open(&self, rel: &str) -> Result<Option<Box<dyn BufRead + Send>>, PayloadError> {
        let p = self.path(rel);
        match std::fs::File::open(&p) {
            Ok(f) if f.metadata().is_ok_and(|m| m.is_dir()) => Ok(None),
            Ok(f) => {
                citriage_sources::stream_limited(&p.display().to_string(), f, citriage_sources::http::DEFAULT_MAX_BYTES)
                    .map(Some)
                    .map_err(PayloadError::from)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(PayloadError::Io { path: p.display().to_string(), source }),
        }
    }

    fn origin(&self, rel: &str) -> String {
        self.path(rel).display().to_string()
    }
}

impl EvidenceProvider for GcsMirror {
    fn run_evidence(&self, prow_url: &str) -> Result<Option<RunEvidence>, PayloadError> {
        let Some((dir, gpath)) = self.run_dir(prow_url) else { return Ok(None) };
        if !dir.is_dir() {
            return Ok(None);
        }
        let root = std::fs::canonicalize(&self.root).unwrap_or_else(|_| self.root.clone());
        if !std::fs::canonicalize(&dir).is_ok_and(|c| c.starts_with(&root)) {
            return Err(PayloadError::invalid(
                dir.display().to_string(),
                "the run's folder is a symlink leading out of the mirror: not read",
            ));
        }
        read_run(prow_url, &gpath, &self.url_base, &LocalRun { dir: &dir, root }, &self.scanner, &self.limits).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gcs_paths() {
        assert_eq!(
            gcs_path_of("https://prow.ci.openshift.org/view/gs/test-platform-results/logs/job-a/123").as_deref(),
            Some("test-platform-results/logs/job-a/123")
        );
        assert_eq!(gcs_path_of("gs://b/logs/j/1").as_deref(), Some("b/logs/j/1"));
        assert_eq!(gcs_path_of("https://prow/view/gs/b/../../etc"), None);
        assert_eq!(gcs_path_of("https://example.com/x"), None);
    }

    #[test]
    fn streamed_scan_equals_the_whole_text_scan() {
        let sc = LogScanner::default();
        let mut text = Vec::new();
        text.extend_from_slice(b"INFO start\r\nerror: first\r\nlone\rcr error: x\n");
        text.extend_from_slice(b"bad \xff\xfe utf8 ERROR: y\n\n\x1b[31mFAILED\x1b[0m z\n");
        for i in 0..400 {
            text.extend_from_slice(format!("line {i}\nerror: {i}\n").as_bytes());
        }
        text.extend_from_slice(b"Step e2e-install failed after 3s\nlast without newline\r");
        let whole = sc.scan(&String::from_utf8_lossy(&text), "build-log.txt", Some("u"), 50);
        // A small buffer, so lines span reads.
        let r = std::io::BufReader::with_capacity(7, &text[..]);
        let streamed = sc.scan_reader(r, "build-log.txt", Some("u"), 50, usize::MAX).unwrap();
        assert_eq!(streamed.lines, whole.lines);
        assert_eq!(streamed.tail, whole.tail);
        assert_eq!(streamed.step, whole.step);
        assert_eq!(whole.lines.len(), 50);
        assert_eq!(whole.lines[0].text, "error: first");
        assert_eq!(whole.tail.last().unwrap().text, "last without newline");
        assert_eq!(whole.tail.last().unwrap().at.line, Some(808));
        assert_eq!(whole.step.as_deref(), Some("e2e-install"));

        // A line longer than the bound is kept on its first bytes; the next line is
        // still line 2.
        let long = format!("{}error: late\nerror: next\n", "x".repeat(100));
        let r = std::io::BufReader::with_capacity(16, long.as_bytes());
        let cut = sc.scan_reader(r, "f", None, 10, 64).unwrap();
        assert_eq!(cut.lines.len(), 1);
        assert_eq!((cut.lines[0].text.as_str(), cut.lines[0].at.line), ("error: next", Some(2)));
        assert_eq!(cut.tail[0].text.len(), 64);
    }

    /// A mirror's run folder with a build log that is a symlink out of the mirror and a
    /// JUnit file that is a symlink inside it: the first is refused and named in the
    /// run's problems (never read), the second is read.
    #[test]
    #[cfg(unix)]
    fn a_mirror_refuses_symlinks_out_of_it() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("secret.txt");
        std::fs::write(&outside, "error: secret line\n").unwrap();
        let root = tmp.path().join("mirror");
        let run = root.join("b/logs/job/1");
        std::fs::create_dir_all(run.join("artifacts")).unwrap();
        std::fs::write(
            root.join("b/shared.xml"),
            "<testsuite name=\"s\"><testcase name=\"t\"><failure message=\"boom\"/></testcase></testsuite>",
        )
        .unwrap();
        std::os::unix::fs::symlink(&outside, run.join("build-log.txt")).unwrap();
        std::os::unix::fs::symlink(root.join("b/shared.xml"), run.join("artifacts/junit_e2e.xml")).unwrap();
        let m = GcsMirror::new(&root);
        let ev = m.run_evidence("https://prow/view/gs/b/logs/job/1").unwrap().unwrap();
        assert!(ev.log_lines.is_empty() && ev.context.is_empty(), "{:?}", ev.log_lines);
        assert_eq!(ev.problems.len(), 1, "{:?}", ev.problems);
        assert!(ev.problems[0].contains("build-log.txt") && ev.problems[0].contains("symlink"), "{:?}", ev.problems);
        assert_eq!(ev.failures.len(), 1);
        assert_eq!(ev.failures[0].at.cite(), "artifacts/junit_e2e.xml:1");
        // A run folder that is itself a link out of the mirror is not read.
        std::fs::create_dir_all(root.join("b/logs/job2")).unwrap();
        std::os::unix::fs::symlink(tmp.path(), root.join("b/logs/job2/7")).unwrap();
        let e = m.run_evidence("https://prow/view/gs/b/logs/job2/7").unwrap_err();
        assert!(e.to_string().contains("symlink"), "{e}");
    }

    #[test]
    fn junit_names() {
        for ok in ["junit.xml", "junit_e2e_1.xml", "junit-aggregated.xml", "junit_x.xml.gz", "results.json"] {
            assert!(is_junit_name(ok), "{ok}");
        }
        for no in ["e2e.xml", "junit.json", "my-results.json", "junit.xml.bak"] {
            assert!(!is_junit_name(no), "{no}");
        }
    }

    #[test]
    fn ansi() {
        assert_eq!(strip_ansi("\u{1b}[38;5;9m[FAILED]\u{1b}[0m fail"), "[FAILED] fail");
        assert_eq!(strip_ansi("plain"), "plain");
    }

    #[test]
    fn flakes_and_informing() {
        let mk = |name: &str, st: CaseStatus, inf: bool| JunitCase {
            suite: "s".into(),
            classname: String::new(),
            name: name.into(),
            status: st,
            message: "m".into(),
            body: String::new(),
            system_out: String::new(),
            informing: inf,
            line: 3,
        };
        let files = vec![(
            Location { file: "j.xml".into(), url: None, line: None },
            vec![
                mk("a", CaseStatus::Failed, false),
                mk("a", CaseStatus::Passed, false),
                mk("b", CaseStatus::Failed, true),
                mk("c", CaseStatus::Error, false),
                mk("Run multi-stage test e2e - e2e-ipi-install container test", CaseStatus::Failed, false),
            ],
        )];
        let (f, total) = failures_from_cases(&files);
        assert_eq!(total, 5);
        let kinds: Vec<_> = f.iter().map(|x| (x.name.as_str(), x.kind, x.is_step)).collect();
        assert_eq!(kinds[0], ("a", TestKind::Flake, false));
        assert_eq!(kinds[1], ("b", TestKind::Informing, false));
        assert_eq!(kinds[2], ("c", TestKind::Failure, false));
        assert!(kinds[3].2);
        assert_eq!(f[2].at.cite(), "j.xml:3");
    }
}
