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
use std::io::Read;
use std::path::{Path, PathBuf};

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::aggregated::{self, AggregatedTest};
use crate::error::{read_optional, PayloadError};
use crate::junit::{self, CaseStatus, JunitCase};
use citriage_model::time::Epoch;

/// Where a piece of evidence is.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Location {
    /// Artifact path relative to the run (`build-log.txt`, `artifacts/.../junit.xml`).
    pub file: String,
    /// Browsable URL of the file, when known.
    pub url: Option<String>,
    /// 1-based line.
    pub line: Option<u32>,
}

impl Location {
    /// `file:line` (or `file`).
    pub fn cite(&self) -> String {
        match self.line {
            Some(l) => format!("{}:{l}", self.file),
            None => self.file.clone(),
        }
    }
}

/// One cited line of a log or failure text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct LogLine {
    pub text: String,
    pub at: Location,
}

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
    let Some(arr) = v.as_array() else { return 0 };
    for t in arr {
        let s = |k: &str| t.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
        let name = s("name");
        if name.is_empty() {
            continue;
        }
        let message = if !s("failure_message").is_empty() { s("failure_message") } else { s("error_message") };
        if let Some(agg) = t.get("aggregated").filter(|a| a.is_object()) {
            if !ev.aggregated.iter().any(|a| a.name == name) {
                let runs = |x: Option<&serde_json::Value>| -> Vec<aggregated::UnderlyingRun> {
                    x.and_then(|a| a.as_array())
                        .into_iter()
                        .flatten()
                        .map(|r| {
                            let g = |k: &str| r.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
                            let human = g("humanurl");
                            aggregated::UnderlyingRun {
                                job_run_id: g("jobrunid"),
                                job: crate::model::prow_job_from_url(&human),
                                human_url: human,
                                gcs_artifact_url: g("gcsartifacturl"),
                            }
                        })
                        .collect()
                };
                ev.aggregated.push(AggregatedTest {
                    name: name.clone(),
                    suite: s("suite_name"),
                    failed: matches!(s("status").as_str(), "failed" | "error"),
                    informing: s("lifecycle") == "informing"
                        || s("test_lifecycle") == "informing"
                        || aggregated::is_non_blocking(&message),
                    verdict: aggregated::parse_verdict(&message),
                    passes: runs(agg.get("passes")),
                    failures: runs(agg.get("failures")),
                    skips: runs(agg.get("skips")),
                    incomplete: Vec::new(),
                    line: 0,
                    problem: None,
                });
            }
            continue;
        }
        if xml_names.contains(&name) || ev.failures.iter().any(|f| f.name == name) {
            continue;
        }
        let status = s("status");
        let kind = if status == "flake" || status == "flaky" {
            TestKind::Flake
        } else if s("test_lifecycle") == "informing"
            || s("lifecycle") == "informing"
            || aggregated::is_non_blocking(&message)
        {
            TestKind::Informing
        } else if matches!(status.as_str(), "failed" | "error" | "failure" | "") {
            TestKind::Failure
        } else {
            continue;
        };
        let body = if !s("failure_text").is_empty() { s("failure_text") } else { s("error_text") };
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
        ev.failures.push(TestFailure {
            is_step: is_step_name(&name),
            name,
            suite: s("suite_name"),
            message: strip_ansi(&first).into_owned(),
            text: strip_ansi(&text).chars().take(16 * 1024).collect(),
            kind,
            at: loc.clone(),
            hint: None,
        });
    }
    arr.len()
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
        let mut out = LogScan::default();
        let mut tail: std::collections::VecDeque<LogLine> = std::collections::VecDeque::new();
        let at = |i: usize| Location { file: file.to_string(), url: url.map(str::to_string), line: Some(i as u32 + 1) };
        for (i, raw) in text.lines().enumerate() {
            let l = strip_ansi(raw);
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
            if !self.re.is_match(l) || crate::lines::is_info_line(l) {
                continue;
            }
            if out.lines.len() < limit {
                out.lines.push(LogLine { text: l.trim_end().chars().take(1000).collect(), at: at(i) });
            }
        }
        out.tail = tail.into_iter().collect();
        out
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

/// A local mirror of GCS buckets: the Prow URL `.../view/gs/<bucket>/logs/<job>/<id>`
/// maps to `<root>/<bucket>/logs/<job>/<id>/`, read for `finished.json`,
/// `build-log.txt` (gzip or plain) and every `junit*.xml` under `artifacts/`
/// (and the run root), in path order.
pub struct GcsMirror {
    root: PathBuf,
    scanner: LogScanner,
    /// Base of the browsable file URLs cited in evidence.
    pub url_base: String,
    /// Most log lines kept per run.
    pub max_log_lines: usize,
}

impl GcsMirror {
    /// A mirror rooted at `root` (the directory holding the bucket directories).
    pub fn new(root: impl Into<PathBuf>) -> GcsMirror {
        GcsMirror {
            root: root.into(),
            scanner: LogScanner::default(),
            url_base: "https://storage.googleapis.com".to_string(),
            max_log_lines: 400,
        }
    }

    /// The local directory of a run, if the URL maps into the mirror.
    pub fn run_dir(&self, prow_url: &str) -> Option<(PathBuf, String)> {
        let p = gcs_path_of(prow_url)?;
        let dir = p.split('/').fold(self.root.clone(), |acc, seg| acc.join(seg));
        Some((dir, p))
    }
}

fn find_junit_files(dir: &Path, rel: &str, depth: usize, out: &mut Vec<(PathBuf, String)>) {
    if depth > 10 || out.len() > 500 {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<(String, PathBuf, bool)> = rd
        .flatten()
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let is_dir = e.file_type().map(|t| t.is_dir()).unwrap_or(false);
            (name, e.path(), is_dir)
        })
        .collect();
    entries.sort();
    for (name, path, is_dir) in entries {
        let r = if rel.is_empty() { name.clone() } else { format!("{rel}/{name}") };
        if is_dir {
            if depth == 0 && name != "artifacts" {
                continue;
            }
            find_junit_files(&path, &r, depth + 1, out);
        } else if (name.starts_with("junit") && (name.ends_with(".xml") || name.ends_with(".xml.gz")))
            || name == "results.json"
        {
            out.push((path, r));
        }
    }
}

impl EvidenceProvider for GcsMirror {
    fn run_evidence(&self, prow_url: &str) -> Result<Option<RunEvidence>, PayloadError> {
        let Some((dir, gpath)) = self.run_dir(prow_url) else { return Ok(None) };
        if !dir.is_dir() {
            return Ok(None);
        }
        let url_of = |rel: &str| format!("{}/{}/{}", self.url_base.trim_end_matches('/'), gpath, rel);
        let mut ev = RunEvidence::empty(prow_url);
        if let Some(b) = read_optional(&dir.join("started.json"))? {
            let origin = dir.join("started.json").display().to_string();
            let v: serde_json::Value = serde_json::from_slice(&b)
                .map_err(|e| PayloadError::invalid(&origin, format!("malformed JSON: {e}")))?;
            ev.started = v.get("timestamp").and_then(|t| t.as_i64());
        }
        if let Some(b) = read_optional(&dir.join("finished.json"))? {
            let origin = dir.join("finished.json").display().to_string();
            let v: serde_json::Value = serde_json::from_slice(&b)
                .map_err(|e| PayloadError::invalid(&origin, format!("malformed JSON: {e}")))?;
            ev.finished = v.get("timestamp").and_then(|t| t.as_i64());
            ev.result = v.get("result").and_then(|r| r.as_str()).map(str::to_string);
        }
        for name in ["build-log.txt", "build-log.txt.gz"] {
            let p = dir.join(name);
            if let Some(raw) = read_optional(&p)? {
                let text = maybe_gunzip(raw, &p.display().to_string())?;
                let text = String::from_utf8_lossy(&text);
                let scan =
                    self.scanner.scan(&text, "build-log.txt", Some(&url_of("build-log.txt")), self.max_log_lines);
                ev.log_lines = scan.lines;
                ev.failed_step = scan.step;
                ev.context = scan.tail;
                break;
            }
        }
        let mut files = Vec::new();
        find_junit_files(&dir, "", 0, &mut files);
        // junit*.xml directly in the run folder too.
        if let Ok(rd) = std::fs::read_dir(&dir) {
            let mut top: Vec<(PathBuf, String)> = rd
                .flatten()
                .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
                .map(|e| (e.path(), e.file_name().to_string_lossy().into_owned()))
                .filter(|(_, n)| n.starts_with("junit") && n.ends_with(".xml"))
                .collect();
            top.sort();
            files.extend(top);
        }
        let mut parsed = Vec::new();
        let mut problems = Vec::new();
        let mut results_files = Vec::new();
        for (path, rel) in &files {
            if rel.ends_with("results.json") {
                results_files.push((path.clone(), rel.clone()));
                continue;
            }
            let raw = match read_optional(path)? {
                Some(r) => r,
                None => continue,
            };
            let bytes = match maybe_gunzip(raw, &path.display().to_string()) {
                Ok(b) => b,
                Err(e) => {
                    problems.push(e.to_string());
                    continue;
                }
            };
            let f = junit::parse_junit(&bytes, rel);
            if let Some(p) = &f.problem {
                problems.push(p.clone());
            }
            if f.cases.is_empty() && f.problem.is_some() {
                continue;
            }
            if rel.ends_with("junit-aggregated.xml") {
                ev.aggregated.extend(aggregated::aggregated_tests(&f.cases));
            }
            parsed.push((Location { file: rel.clone(), url: Some(url_of(rel)), line: None }, f.cases));
        }
        let (failures, total) = failures_from_cases(&parsed);
        ev.failures = failures;
        ev.tests_total = total;
        let xml_names: std::collections::BTreeSet<String> =
            parsed.iter().flat_map(|(_, cases)| cases.iter().map(|c| c.name.clone())).collect();
        let mut results_entries = 0usize;
        let mut results_read = 0u32;
        for (path, rel) in &results_files {
            let Some(raw) = read_optional(path)? else { continue };
            match serde_json::from_slice::<serde_json::Value>(&raw) {
                Ok(v) => {
                    results_read += 1;
                    let loc = Location { file: rel.clone(), url: Some(url_of(rel)), line: None };
                    results_entries += merge_results_json(&mut ev, &v, &loc, &xml_names);
                }
                Err(e) => problems.push(format!("{rel}: malformed JSON: {e}")),
            }
        }
        ev.junit = junit_state(parsed.len() as u32, files.len(), results_read, results_entries, problems);
        Ok(Some(ev))
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
