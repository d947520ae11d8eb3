//! Ingestion of Prow build artifacts into the store (and of TestGrid's tables,
//! [`testgrid`]): discover a job's builds (periodic
//! `logs/<job>/`, presubmit `pr-logs/directory/<job>/` pointers), read each build's
//! `started.json`, `finished.json`, `prowjob.json` and JUnit files through an
//! [`ArtifactSource`], and write one transaction per build. Builds already stored
//! complete are skipped, so an interrupted run resumes where it stopped. Malformed
//! files are recorded on the build with their reason; a build whose result cannot be
//! read is never stored as passing. Failed builds also get the failure-line excerpts
//! of their build log ([`excerpts`]).
//!
//! JUnit files and logs are read as streams ([`ArtifactSource::open`]), from a mirror
//! or over HTTP alike. A stream the source cannot give to its end (a transfer cut off
//! for good after the HTTP layer's resumptions, a gzip bomb, corrupt gzip) ends with
//! the source's error: what was parsed of that object is dropped and the error is
//! handled as if the object had been read whole (a transient one fails the build,
//! which is then not stored and is fetched again by the next run; any other is the
//! build's problem), so no half-read file is ever stored.

pub mod excerpts;
pub mod testgrid;

use citriage_formats::junit::{self, Status};
use citriage_formats::prow::{self, ProwJob};
use citriage_model::build::{BuildRecord, KettleFacts, StoredTest};
use citriage_model::time::parse_rfc3339_sane as parse_rfc3339;
use citriage_sources::artifacts::ArtifactSource;
use citriage_sources::SourceError;
use citriage_store::{Store, StoreError};
pub use excerpts::ExcerptLimits;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;

/// How to ingest.
#[derive(Clone)]
pub struct IngestOptions {
    /// Builds fetched at once.
    pub concurrency: usize,
    /// Only the newest N builds of each job (by build id).
    pub max_builds_per_job: Option<usize>,
    /// Skip a job whose `latest-build.txt` names a build already stored complete.
    pub incremental: bool,
    /// List builds from Deck's job history instead of the bucket listing.
    pub deck: Option<std::sync::Arc<citriage_sources::deck::DeckPages>>,
    /// Pages of job history read per job.
    pub deck_pages: usize,
    /// Failure-line excerpts of failed builds' `build-log.txt` within these limits;
    /// `None` stores none.
    pub log_excerpts: Option<ExcerptLimits>,
    /// When set (a shutdown was asked for), no further build is stored: the build
    /// being stored is finished, the rest is left for the next run.
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl Default for IngestOptions {
    fn default() -> Self {
        IngestOptions {
            concurrency: 8,
            max_builds_per_job: None,
            incremental: false,
            deck: None,
            deck_pages: 5,
            log_excerpts: Some(ExcerptLimits::default()),
            stop: None,
        }
    }
}

/// Progress events for the caller's progress bar.
#[derive(Debug, Clone)]
pub enum Progress {
    /// The number of builds found for a job.
    Discovered { job: String, builds: usize },
    /// One build done (fetched and stored, skipped, or failed).
    Build { job: String, path: String },
}

/// A build that could not be fetched or stored.
#[derive(Debug, Clone, Serialize)]
pub struct FetchFailure {
    pub job: String,
    pub path: String,
    pub reason: String,
}

/// What an ingest run did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct IngestSummary {
    pub jobs: usize,
    pub builds_found: usize,
    pub builds_stored: usize,
    pub builds_skipped: usize,
    pub tests_stored: usize,
    /// Log excerpts stored with the builds.
    pub excerpts_stored: usize,
    /// Builds stored with a problem (malformed or missing files).
    pub builds_with_problems: usize,
    pub failures: Vec<FetchFailure>,
    /// Builds stored complete (finished, all artifacts read); a build still running
    /// is stored again on each run until it is.
    #[serde(skip)]
    pub complete_stored: usize,
    /// The run stopped early because a shutdown was asked for.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stopped: bool,
}

/// Errors that stop an ingest run (the store failing). Per-build fetch problems are
/// collected in the summary instead.
#[derive(Debug)]
pub enum IngestError {
    Store(StoreError),
    Source(SourceError),
}

impl std::fmt::Display for IngestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IngestError::Store(e) => write!(f, "{e}"),
            IngestError::Source(e) => write!(f, "{e}"),
        }
    }
}

impl From<StoreError> for IngestError {
    fn from(e: StoreError) -> Self {
        IngestError::Store(e)
    }
}

impl From<SourceError> for IngestError {
    fn from(e: SourceError) -> Self {
        IngestError::Source(e)
    }
}

/// Every job with a `logs/` folder in the source, plus presubmits with pointers.
pub fn discover_jobs(src: &dyn ArtifactSource) -> Result<Vec<String>, SourceError> {
    Ok(discover_job_list(src)?.jobs)
}

/// The jobs a source has and the job folders it refused.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobList {
    /// Job names, sorted (`pr:`-prefixed for presubmits found through pointers).
    pub jobs: Vec<String>,
    /// Names listed under `logs/` or `pr-logs/directory/` that were refused (unsafe,
    /// not UTF-8, a symlink out of the mirror), each naming the name and why.
    pub refused: Vec<String>,
}

/// [`discover_jobs`] with the names refused on the way, so a caller can say which
/// job folders it could not read instead of leaving them out silently.
pub fn discover_job_list(src: &dyn ArtifactSource) -> Result<JobList, SourceError> {
    let logs = src.list("logs/")?;
    let mut refused = logs.refused;
    let mut jobs: Vec<String> =
        logs.prefixes.iter().map(|p| p.trim_start_matches("logs/").trim_end_matches('/').to_string()).collect();
    let pointers = src.list("pr-logs/directory/")?;
    refused.extend(pointers.refused);
    for p in pointers.prefixes {
        jobs.push(format!("pr:{}", p.trim_start_matches("pr-logs/directory/").trim_end_matches('/')));
    }
    jobs.sort();
    jobs.dedup();
    Ok(JobList { jobs, refused })
}

fn is_build_id(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Build folders of a job, oldest first. `pr:`-prefixed names (or jobs with no
/// `logs/` folder) are looked up through `pr-logs/directory/<job>/` pointers.
pub fn build_paths(src: &dyn ArtifactSource, job: &str) -> Result<Vec<String>, SourceError> {
    Ok(build_list(src, job)?.paths)
}

/// A job's build folders and the names refused on the way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuildList {
    /// Build folders (paths from the bucket root), oldest first.
    pub paths: Vec<String>,
    /// Pointer targets or listed names refused, each naming the name and why.
    pub refused: Vec<String>,
}

/// [`build_paths`] with the refused names: a `pr-logs/directory/` pointer whose target
/// is not a safe path inside the bucket (`..`, absolute, another bucket, a backslash,
/// control characters) is refused, never followed.
pub fn build_list(src: &dyn ArtifactSource, job: &str) -> Result<BuildList, SourceError> {
    let (name, presubmit) = match job.strip_prefix("pr:") {
        Some(n) => (n, true),
        None => (job, false),
    };
    let mut out: Vec<(u128, String)> = Vec::new();
    let mut refused = Vec::new();
    if !presubmit {
        let l = src.list(&format!("logs/{name}/"))?;
        refused.extend(l.refused);
        for p in l.prefixes {
            let id = p.trim_end_matches('/').rsplit('/').next().unwrap_or("");
            if is_build_id(id) {
                out.push((id.parse().unwrap_or(0), p.trim_end_matches('/').to_string()));
            }
        }
    }
    if out.is_empty() {
        let bucket_prefix = format!("gs://{}/", src.bucket());
        let l = src.list(&format!("pr-logs/directory/{name}/"))?;
        refused.extend(l.refused);
        for (obj, _) in l.objects {
            let file = obj.rsplit('/').next().unwrap_or("");
            let Some(id) = file.strip_suffix(".txt").filter(|i| is_build_id(i)) else { continue };
            let Some(body) = src.get(&obj)? else { continue };
            let target = String::from_utf8_lossy(&body).trim().to_string();
            if target.is_empty() {
                continue;
            }
            let rel = target.strip_prefix(&bucket_prefix).unwrap_or(&target).trim_end_matches('/').to_string();
            match pointer_target_problem(&rel) {
                None => out.push((id.parse().unwrap_or(0), rel)),
                Some(why) => refused.push(format!("{}: pointer target {target:?} refused: {why}", src.locator(&obj))),
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(BuildList { paths: out.into_iter().map(|(_, p)| p).collect(), refused })
}

/// Why a build folder named by remote data (a pointer, a Deck link) is refused.
fn pointer_target_problem(rel: &str) -> Option<&'static str> {
    if rel.starts_with("gs://") {
        return Some("another bucket");
    }
    if let Err(why) = citriage_sources::paths::check_name(rel) {
        return Some(why);
    }
    let id = rel.rsplit('/').next().unwrap_or("");
    if !is_build_id(id) {
        return Some("does not end in a build id");
    }
    None
}

/// Build folders of a job from Deck's job history, newest pages first, following
/// `?buildId=` pagination (at most `max_pages` pages); returned oldest first.
pub fn history_build_paths(
    deck: &citriage_sources::deck::DeckPages,
    bucket: &str,
    job: &str,
    max_pages: usize,
) -> Result<Vec<String>, SourceError> {
    let job_path = match job.strip_prefix("pr:") {
        Some(n) => format!("pr-logs/directory/{n}"),
        None => format!("logs/{job}"),
    };
    let prefix = format!("/view/gs/{bucket}/");
    let mut seen = std::collections::BTreeSet::new();
    let mut out: Vec<(u128, String)> = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..max_pages.max(1) {
        let Some(page) = deck.page(bucket, &job_path, cursor.as_deref())? else { break };
        let rows = prow::parse_job_history(&page, &format!("{} {job_path}", deck.describe()))
            .map_err(|detail| SourceError::Transport { location: job_path.clone(), detail })?;
        let mut added = 0;
        for r in &rows {
            if !seen.insert(r.id.clone()) {
                continue;
            }
            added += 1;
            if let Some(path) = r.spyglass_link.as_deref().and_then(|l| l.strip_prefix(&prefix)) {
                let path = path.trim_end_matches('/');
                if pointer_target_problem(path).is_none() {
                    out.push((r.id.parse().unwrap_or(0), path.to_string()));
                }
            }
        }
        // Follow the page's "Older Runs" link like a browser; without one, ask for the
        // page after the oldest id shown.
        let older = older_runs_link(&page);
        match (older, rows.last()) {
            (Some(id), _) if added > 0 && cursor.as_deref() != Some(id.as_str()) => cursor = Some(id),
            (None, Some(last)) if added > 0 => cursor = Some(last.id.clone()),
            _ => break,
        }
    }
    out.sort();
    out.dedup();
    Ok(out.into_iter().map(|(_, p)| p).collect())
}

/// The `buildId` of a job-history page's "Older Runs" link.
fn older_runs_link(page: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(page);
    let re = regex::Regex::new(r#"href="[^"]*[?&]buildId=(\d+)"[^>]*>\s*Older"#).ok()?;
    re.captures(&text).and_then(|c| c.get(1)).map(|m| m.as_str().to_string())
}

/// The newest build id a job's `latest-build.txt` names, if the file exists.
pub fn latest_build(src: &dyn ArtifactSource, job: &str) -> Result<Option<String>, SourceError> {
    if job.starts_with("pr:") {
        return Ok(None);
    }
    Ok(src
        .get(&format!("logs/{job}/latest-build.txt"))?
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .filter(|s| is_build_id(s)))
}

/// Whether kettle reads a JUnit file at this path (relative to the build folder): a
/// `junit*.xml` directly in `artifacts/` (kettle lists that folder with a delimiter,
/// so sub-folders are never read).
pub fn is_kettle_junit(rel: &str) -> bool {
    rel.strip_prefix("artifacts/").is_some_and(|f| !f.contains('/') && f.starts_with("junit") && f.ends_with(".xml"))
}

/// Formats `started.json` repos the way kettle stores them (`{"org/repo": "refs"}`).
pub fn kettle_repos(repos: &BTreeMap<String, String>) -> Option<String> {
    if repos.is_empty() {
        return None;
    }
    let parts: Vec<String> = repos
        .iter()
        .map(|(k, v)| format!("{}: {}", serde_json::Value::from(k.as_str()), serde_json::Value::from(v.as_str())))
        .collect();
    Some(format!("{{{}}}", parts.join(", ")))
}

/// The commit kettle's flakes query groups a build by: for presubmits the PR head SHA
/// extracted from the repos text, else `repo-commit`, else the version.
pub fn kettle_commit(
    presubmit: bool,
    repos: Option<&str>,
    repo_commit: Option<&str>,
    version: Option<&str>,
) -> Option<String> {
    if presubmit {
        let re = pr_head_regex();
        repos.and_then(|r| re.captures(r)).and_then(|c| c.get(1)).map(|m| m.as_str().to_string())
    } else {
        repo_commit.or(version).map(String::from)
    }
}

/// Kettle's `[^,]+,\d+:([a-f0-9]+)"`.
pub fn pr_head_regex() -> regex::Regex {
    regex::Regex::new(r#"[^,]+,\d+:([a-f0-9]+)""#).unwrap_or_else(|e| unreachable!("fixed regex: {e}"))
}

/// Reads one build folder through the source, with log excerpts within the default
/// limits. Missing or malformed files become problems on the record; only source errors
/// (network, permissions) fail.
pub fn fetch_build(src: &dyn ArtifactSource, job_hint: &str, path: &str) -> Result<BuildRecord, SourceError> {
    fetch_build_with(src, job_hint, path, Some(&ExcerptLimits::default()))
}

/// Like [`fetch_build`]; `log_excerpts` says whether (and within which limits) a failed
/// build's log is excerpted.
pub fn fetch_build_with(
    src: &dyn ArtifactSource,
    job_hint: &str,
    path: &str,
    log_excerpts: Option<&ExcerptLimits>,
) -> Result<BuildRecord, SourceError> {
    let mut problems = Vec::new();
    let base = path.trim_end_matches('/');
    if let Some(why) = pointer_target_problem(base) {
        return Err(SourceError::unsafe_name(&src.describe(), path, why));
    }
    let build_id = base.rsplit('/').next().unwrap_or_default().to_string();
    let loc = |f: &str| src.locator(&format!("{base}/{f}"));
    let started = match get_or_problem(src, &format!("{base}/started.json"), &mut problems)? {
        Got::Missing => {
            problems.push(format!("{}: missing", loc("started.json")));
            None
        }
        Got::Unreadable => None,
        Got::Bytes(b) => match prow::parse_started(&b, &loc("started.json")) {
            Ok(s) => {
                problems.extend(s.problems.iter().cloned());
                Some(s)
            }
            Err(e) => {
                problems.push(e);
                None
            }
        },
    };
    let finished_raw = get_or_problem(src, &format!("{base}/finished.json"), &mut problems)?;
    let finished = match &finished_raw {
        Got::Missing | Got::Unreadable => None,
        Got::Bytes(b) => match prow::parse_finished(b, &loc("finished.json")) {
            Ok(f) => {
                problems.extend(f.problems.iter().cloned());
                Some(f)
            }
            Err(e) => {
                problems.push(e);
                None
            }
        },
    };
    // Bodies are given back to the memory budget as soon as they are parsed.
    let present = !matches!(finished_raw, Got::Missing);
    drop(finished_raw);
    let finished_raw = present;
    let prowjob = match get_or_problem(src, &format!("{base}/prowjob.json"), &mut problems)? {
        Got::Missing | Got::Unreadable => None,
        Got::Bytes(b) => match prow::parse_prowjob(&b, &loc("prowjob.json")) {
            Ok(p) => {
                problems.extend(p.problems.iter().cloned());
                Some(p)
            }
            Err(e) => {
                problems.push(e);
                None
            }
        },
    };
    let walked = src.walk(&format!("{base}/"))?;
    problems.extend(walked.refused);
    let artifacts = walked.objects;
    let mut tests = Vec::new();
    let mut kettle_dropped: Option<String> = None;
    let mut junit_files: Vec<&String> = artifacts
        .iter()
        .map(|(p, _)| p)
        .filter(|p| {
            let file = p.rsplit('/').next().unwrap_or("");
            p.contains("/artifacts/") && file.starts_with("junit") && file.ends_with(".xml")
        })
        .collect();
    junit_files.sort();
    for jf in junit_files {
        let rel = jf.strip_prefix(&format!("{base}/")).unwrap_or(jf).to_string();
        // Read as a stream: a JUnit file of any size costs its reader's buffers, not
        // its size.
        let parsed = match src.open(jf) {
            Ok(Some(stream)) => {
                let mut tap = Tap { inner: stream, failed: None };
                let parsed = junit::read_junit(&mut tap, &src.locator(jf));
                if let Some(e) = tap.failed {
                    // The object could not be read to its end (a transfer cut for
                    // good, a bomb, corrupt gzip): what was parsed of it is dropped,
                    // and the build fails or records why, as if it had been read whole.
                    problem_or_fail(e, &mut problems)?;
                    continue;
                }
                parsed
            }
            Ok(None) => continue,
            Err(e) => {
                problem_or_fail(e, &mut problems)?;
                continue;
            }
        };
        if let Some(p) = parsed.problem {
            problems.push(p);
        }
        // Kettle lists `artifacts/` without recursing: files in its sub-folders are
        // citriage's alone.
        let kettle_reads = is_kettle_junit(&rel);
        if kettle_reads && kettle_dropped.is_none() {
            kettle_dropped = parsed.kettle_fails_build.clone();
        }
        for c in parsed.cases {
            tests.push(StoredTest {
                file: rel.clone(),
                suite: c.suite,
                classname: c.classname,
                name: c.name,
                status: c.status.as_str().to_string(),
                duration: c.time,
                failure_text: c.failure_text,
                attempt: c.attempt,
                informing: c.informing,
                kettle_name: c.kettle_name.filter(|_| kettle_reads),
            });
        }
    }
    let kind = if base.starts_with("pr-logs/pull/batch/") {
        "batch".to_string()
    } else if let Some(t) = prowjob.as_ref().and_then(|p| p.job_type.clone()) {
        t
    } else if base.starts_with("pr-logs/") {
        "presubmit".to_string()
    } else {
        "periodic".to_string()
    };
    let job = prowjob
        .as_ref()
        .and_then(|p| p.job.clone())
        .or_else(|| {
            // logs/<job>/<id> or pr-logs/pull/<repo>/<pr>/<job>/<id>
            let parts: Vec<&str> = base.split('/').collect();
            parts.len().checked_sub(2).map(|i| parts[i].to_string())
        })
        .unwrap_or_else(|| job_hint.trim_start_matches("pr:").to_string());
    let pr = started
        .as_ref()
        .and_then(|s| s.pull.as_deref())
        .and_then(|p| p.parse().ok())
        .or_else(|| prowjob.as_ref().and_then(|p| p.pulls.first().map(|x| x.0)));
    let repos = started.as_ref().and_then(|s| kettle_repos(&s.repos));
    let repo_commit = started.as_ref().and_then(|s| s.repo_commit.clone());
    let repo_version = started.as_ref().and_then(|s| s.repo_version.clone());
    let presubmit = kind == "presubmit" || kind == "batch";
    // Kettle's row: commit and repos from started.json's top level, else the metadata
    // kettle reads (finished.json's when it has one), result and version from finished.json.
    let kettle = KettleFacts {
        result: finished.as_ref().and_then(|f| f.kettle_result.clone()),
        version: finished.as_ref().and_then(|f| f.version.clone()),
        repo_commit: started.as_ref().and_then(|s| s.kettle_repo_commit.clone()),
        repos: started.as_ref().and_then(|s| s.kettle_repos.clone()).or_else(|| match &finished {
            Some(f) if f.has_metadata => f.metadata_repos.clone(),
            _ => started.as_ref().and_then(|s| s.metadata_repos.clone()),
        }),
        dropped: kettle_dropped,
    };
    let commit_sha =
        kettle_commit(presubmit, kettle.repos.as_deref(), kettle.repo_commit.as_deref(), kettle.version.as_deref());
    let mut ts = |t: Option<i64>, file: &str| match prow::checked_timestamp(t, &loc(file), "timestamp") {
        Ok(t) => t,
        Err(e) => {
            problems.push(e);
            None
        }
    };
    let started_ts = ts(started.as_ref().and_then(|s| s.timestamp), "started.json");
    let finished_ts = ts(finished.as_ref().and_then(|f| f.timestamp), "finished.json");
    let state = prowjob.as_ref().and_then(|p| p.state.clone());
    let mut result = finished.as_ref().and_then(|f| f.result.clone());
    if result.is_none() && finished_raw {
        // finished.json exists but is unreadable: never a silent pass.
        result = Some("ERROR".into());
    }
    if result.is_none() && state.as_deref() == Some("error") {
        result = Some("ERROR".into());
    }
    let complete = finished_raw || matches!(state.as_deref(), Some("error" | "aborted"));
    let mut taken = Vec::new();
    if let Some(limits) = log_excerpts.filter(|_| excerpts::wants_excerpts(result.as_deref())) {
        let read = excerpts::read_build_log(src, base, &artifacts, limits)?;
        taken = read.excerpts;
        problems.extend(read.problems);
    }
    Ok(BuildRecord {
        bucket: src.bucket().to_string(),
        path: base.to_string(),
        job,
        build_id,
        kind,
        pr,
        commit_sha,
        repo_commit,
        repo_version,
        repos,
        started: started_ts,
        finished: finished_ts,
        duration: match (started_ts, finished_ts) {
            (Some(a), Some(b)) if b >= a => Some(b - a),
            _ => None,
        },
        result,
        state,
        executor: started
            .as_ref()
            .and_then(|s| s.node.clone())
            .or_else(|| prowjob.as_ref().and_then(|p| p.cluster.clone())),
        origin: "gcs".into(),
        problems,
        complete,
        tests,
        artifacts: artifacts
            .into_iter()
            .map(|(p, s)| (p.strip_prefix(&format!("{base}/")).unwrap_or(&p).to_string(), s))
            .collect(),
        excerpts: taken,
        kettle: Some(kettle),
        testgrid: prowjob.as_ref().and_then(|p| {
            citriage_model::build::TestgridPlace::from_annotations(
                p.testgrid_dashboards.as_deref(),
                p.testgrid_tab.as_deref(),
            )
        }),
        versions: build_versions([
            ("started.json", started.map(|s| s.versions)),
            ("finished.json", finished.map(|f| f.versions)),
            ("prowjob.json", prowjob.map(|p| p.versions)),
        ]),
    })
}

/// A document's name and its version entries (`None` when it was not read).
type DocVersions<'a> = (&'a str, Option<Vec<(String, String)>>);

/// What the build ran with, from each document's version entries, sorted by file and key.
fn build_versions(docs: [DocVersions<'_>; 3]) -> Vec<citriage_model::build::BuildVersion> {
    let mut out: Vec<_> = docs
        .into_iter()
        .flat_map(|(file, v)| {
            v.unwrap_or_default().into_iter().map(move |(key, value)| citriage_model::build::BuildVersion {
                file: file.to_string(),
                key,
                value,
            })
        })
        .collect();
    out.sort();
    out.dedup_by(|a, b| a.file == b.file && a.key == b.key);
    out
}

/// A stream that remembers the first [`SourceError`] it passed on (the source could not
/// give the object to its end), so its reader's partial result can be dropped.
struct Tap {
    inner: Box<dyn std::io::BufRead + Send>,
    failed: Option<SourceError>,
}

/// `e` for the reader; the source's error it carries is kept in `failed`.
fn noted(failed: &mut Option<SourceError>, e: std::io::Error) -> std::io::Error {
    match citriage_sources::source_error(e) {
        Ok(s) => {
            let message = s.to_string();
            failed.get_or_insert(s);
            std::io::Error::other(message)
        }
        Err(e) => e,
    }
}

impl std::io::Read for Tap {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf).map_err(|e| noted(&mut self.failed, e))
    }
}

impl std::io::BufRead for Tap {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        match self.inner.fill_buf() {
            Ok(b) => Ok(b),
            Err(e) => Err(noted(&mut self.failed, e)),
        }
    }
    fn consume(&mut self, n: usize) {
        self.inner.consume(n)
    }
}

/// An object read for a build.
enum Got {
    Missing,
    /// Present but refused for good (too large, a gzip bomb, an unsafe name): the
    /// reason is already among the build's problems.
    Unreadable,
    Bytes(citriage_sources::Body),
}

/// Reads an object; a refusal that a rerun would meet again (too large, a bomb, an
/// unsafe name, corrupt gzip) becomes a problem on the build; other errors fail it.
fn get_or_problem(src: &dyn ArtifactSource, path: &str, problems: &mut Vec<String>) -> Result<Got, SourceError> {
    match src.get(path) {
        Ok(Some(b)) => Ok(Got::Bytes(b)),
        Ok(None) => Ok(Got::Missing),
        Err(e) => problem_or_fail(e, problems).map(|()| Got::Unreadable),
    }
}

/// An error reading one object: recorded as the build's problem when it concerns the
/// object alone (too large, a bomb, unsafe, corrupt), returned when the source failed.
fn problem_or_fail(e: SourceError, problems: &mut Vec<String>) -> Result<(), SourceError> {
    match e {
        SourceError::Inflated { .. }
        | SourceError::OverBudget { .. }
        | SourceError::TooLarge { .. }
        | SourceError::UnsafeName { .. }
        | SourceError::Gzip { .. } => {
            problems.push(e.to_string());
            Ok(())
        }
        e => Err(e),
    }
}

/// Ingests jobs' builds from a source into the store.
pub fn ingest_jobs(
    src: &dyn ArtifactSource,
    store: &mut Store,
    jobs: &[String],
    opts: &IngestOptions,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<IngestSummary, IngestError> {
    let mut summary = IngestSummary { jobs: jobs.len(), ..IngestSummary::default() };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(opts.concurrency.max(1)).build().map_err(|e| {
        IngestError::Source(SourceError::Transport { location: "thread pool".into(), detail: e.to_string() })
    })?;
    let stopped = || opts.stop.as_ref().is_some_and(|s| s.load(std::sync::atomic::Ordering::SeqCst));
    for job in jobs {
        if stopped() {
            summary.stopped = true;
            break;
        }
        if opts.incremental {
            if let Ok(Some(id)) = latest_build(src, job) {
                if store.has_complete_build(src.bucket(), &format!("logs/{job}/{id}"))? {
                    progress(Progress::Discovered { job: job.clone(), builds: 0 });
                    continue;
                }
            }
        }
        let listed = match &opts.deck {
            Some(deck) => history_build_paths(deck, src.bucket(), job, opts.deck_pages),
            None => build_list(src, job).map(|l| {
                for r in l.refused {
                    summary.failures.push(FetchFailure { job: job.clone(), path: String::new(), reason: r });
                }
                l.paths
            }),
        };
        let mut paths = match listed {
            Ok(p) => p,
            Err(e) => {
                summary.failures.push(FetchFailure { job: job.clone(), path: String::new(), reason: e.to_string() });
                continue;
            }
        };
        if let Some(n) = opts.max_builds_per_job {
            let skip = paths.len().saturating_sub(n);
            paths.drain(..skip);
        }
        let run = Run { src, opts, pool: &pool, progress };
        if store_listed(&run, store, job, paths, &mut summary)? {
            break;
        }
    }
    Ok(summary)
}

/// What one ingest run shares between its jobs.
struct Run<'a> {
    src: &'a dyn ArtifactSource,
    opts: &'a IngestOptions,
    pool: &'a rayon::ThreadPool,
    progress: &'a (dyn Fn(Progress) + Sync),
}

/// Fetches and stores one job's listed build folders (those stored complete are
/// skipped); true when a shutdown was asked for.
fn store_listed(
    run: &Run<'_>,
    store: &mut Store,
    job: &str,
    paths: Vec<String>,
    summary: &mut IngestSummary,
) -> Result<bool, IngestError> {
    let (src, opts, pool, progress) = (run.src, run.opts, run.pool, run.progress);
    let stopped = || opts.stop.as_ref().is_some_and(|s| s.load(std::sync::atomic::Ordering::SeqCst));
    summary.builds_found += paths.len();
    progress(Progress::Discovered { job: job.to_string(), builds: paths.len() });
    let mut todo = Vec::new();
    for p in paths {
        if store.has_complete_build(src.bucket(), &p)? {
            summary.builds_skipped += 1;
            progress(Progress::Build { job: job.to_string(), path: p });
        } else {
            todo.push(p);
        }
    }
    // Fetch in parallel in chunks; store sequentially in build order so the store
    // always holds whole builds.
    for chunk in todo.chunks(opts.concurrency.max(1) * 4) {
        if stopped() {
            summary.stopped = true;
            return Ok(true);
        }
        let fetched: Vec<(String, Result<BuildRecord, SourceError>)> = pool.install(|| {
            chunk.par_iter().map(|p| (p.clone(), fetch_build_with(src, job, p, opts.log_excerpts.as_ref()))).collect()
        });
        for (p, r) in fetched {
            if stopped() {
                summary.stopped = true;
                return Ok(true);
            }
            match r {
                Ok(b) => {
                    // One row per build: TestGrid's earlier reading of it is kept and compared.
                    store.put_build_merging(&b, &mut |b, stored| testgrid::merge_gcs(b, stored))?;
                    summary.builds_stored += 1;
                    summary.complete_stored += usize::from(b.complete);
                    summary.tests_stored += b.tests.len();
                    summary.excerpts_stored += b.excerpts.len();
                    if !b.problems.is_empty() {
                        summary.builds_with_problems += 1;
                    }
                }
                Err(e) => {
                    summary.failures.push(FetchFailure { job: job.to_string(), path: p.clone(), reason: e.to_string() })
                }
            }
            progress(Progress::Build { job: job.to_string(), path: p });
        }
    }
    Ok(false)
}

/// One pull request's build folders, by job.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrBuildList {
    /// Each job folder's name and its build folders (paths from the bucket root), oldest first.
    pub jobs: Vec<(String, Vec<String>)>,
    /// Names the listing refused, each naming the name and why.
    pub refused: Vec<String>,
}

/// One pull request's build folders: each job folder under `prefix`
/// (`pr-logs/pull/[SEGMENT/]N/`) and its build ids, oldest first, by job; names the
/// listing refused are returned apart.
pub fn pr_build_list(src: &dyn ArtifactSource, prefix: &str) -> Result<PrBuildList, SourceError> {
    let l = src.list(prefix)?;
    let mut refused = l.refused;
    let mut out = Vec::new();
    for jp in l.prefixes {
        let job = jp.trim_end_matches('/').rsplit('/').next().unwrap_or("").to_string();
        if job.is_empty() {
            continue;
        }
        let b = src.list(&jp)?;
        refused.extend(b.refused);
        let mut builds: Vec<(u128, String)> = b
            .prefixes
            .iter()
            .filter_map(|p| {
                let id = p.trim_end_matches('/').rsplit('/').next()?;
                is_build_id(id).then(|| (id.parse().unwrap_or(0), p.trim_end_matches('/').to_string()))
            })
            .collect();
        builds.sort();
        if !builds.is_empty() {
            out.push((job, builds.into_iter().map(|(_, p)| p).collect()));
        }
    }
    out.sort();
    Ok(PrBuildList { jobs: out, refused })
}

/// Ingests only one pull request's job folders (see [`pr_build_list`]).
pub fn ingest_pr(
    src: &dyn ArtifactSource,
    store: &mut Store,
    prefix: &str,
    opts: &IngestOptions,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<IngestSummary, IngestError> {
    let PrBuildList { jobs, refused } = pr_build_list(src, prefix)?;
    let mut summary = IngestSummary { jobs: jobs.len(), ..IngestSummary::default() };
    for r in refused {
        summary.failures.push(FetchFailure { job: String::new(), path: String::new(), reason: r });
    }
    let pool = rayon::ThreadPoolBuilder::new().num_threads(opts.concurrency.max(1)).build().map_err(|e| {
        IngestError::Source(SourceError::Transport { location: "thread pool".into(), detail: e.to_string() })
    })?;
    for (job, mut paths) in jobs {
        if let Some(n) = opts.max_builds_per_job {
            let skip = paths.len().saturating_sub(n);
            paths.drain(..skip);
        }
        let run = Run { src, opts, pool: &pool, progress };
        if store_listed(&run, store, &job, paths, &mut summary)? {
            break;
        }
    }
    Ok(summary)
}

/// Stores the builds that only Prow knows about (`prowjobs.js` items whose state is
/// `error`, which never created a GCS folder), as ERROR results.
pub fn ingest_prowjobs(store: &mut Store, bucket: &str, items: &[ProwJob]) -> Result<usize, StoreError> {
    let mut n = 0;
    for p in items {
        if p.state.as_deref() != Some("error") {
            continue;
        }
        let (Some(job), Some(id)) = (p.job.clone(), p.build_id.clone()) else { continue };
        let kind = p.job_type.clone().unwrap_or_else(|| "periodic".into());
        let path = format!("prowjob/{job}/{id}");
        let started = p.start_time.as_deref().or(p.creation_timestamp.as_deref()).and_then(parse_rfc3339);
        store.put_build(&BuildRecord {
            kettle: None,
            testgrid: citriage_model::build::TestgridPlace::from_annotations(
                p.testgrid_dashboards.as_deref(),
                p.testgrid_tab.as_deref(),
            ),
            bucket: bucket.to_string(),
            path,
            job,
            build_id: id,
            kind,
            pr: p.pulls.first().map(|x| x.0),
            commit_sha: None,
            repo_commit: None,
            repo_version: None,
            repos: None,
            started,
            finished: p.completion_time.as_deref().and_then(parse_rfc3339),
            duration: None,
            result: Some("ERROR".into()),
            state: Some("error".into()),
            executor: p.cluster.clone(),
            origin: "prowjob".into(),
            problems: vec![format!(
                "state=error with no GCS artifacts: {}",
                p.description.clone().unwrap_or_else(|| "no description".into())
            )],
            complete: true,
            tests: Vec::new(),
            artifacts: Vec::new(),
            excerpts: Vec::new(),
            versions: Vec::new(),
        })?;
        n += 1;
    }
    Ok(n)
}

/// Counts of junit statuses in a record (for summaries).
pub fn status_counts(b: &BuildRecord) -> BTreeMap<&'static str, usize> {
    let mut m = BTreeMap::new();
    for t in &b.tests {
        let k = match t.status.as_str() {
            "failed" => Status::Failed.as_str(),
            "error" => Status::Error.as_str(),
            "skipped" => Status::Skipped.as_str(),
            _ => Status::Passed.as_str(),
        };
        *m.entry(k).or_insert(0) += 1;
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kettle_commit_rules() {
        let r = kettle_repos(&BTreeMap::from([(
            "kubernetes/kubernetes".to_string(),
            "master:5feab0,93264:abc123".to_string(),
        )]));
        assert_eq!(r.as_deref(), Some(r#"{"kubernetes/kubernetes": "master:5feab0,93264:abc123"}"#));
        assert_eq!(kettle_commit(true, r.as_deref(), Some("zz"), None).as_deref(), Some("abc123"));
        assert_eq!(kettle_commit(false, r.as_deref(), Some("zz"), Some("v1")).as_deref(), Some("zz"));
        assert_eq!(kettle_commit(false, None, None, Some("v1")).as_deref(), Some("v1"));
    }
}
