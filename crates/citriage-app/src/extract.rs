//! The lines that explain one build's failure (`extract`): from its build log and its
//! JUnit files, with 1-based line ranges and content hashes, preferring lines absent
//! from a passing build's log (given, or with a mirror the newest passing build of the
//! same job before this one, found through the store).

use crate::error::{Error, Result};
use citriage_formats::junit::{parse_junit, Status};
use citriage_model::build::prow_url;
use citriage_patterns::extract::{extract_junit, extract_log, Excerpt, ExtractConfig};
use citriage_store::Store;
use std::path::{Path, PathBuf};

/// What `extract` is asked.
#[derive(Debug, Clone)]
pub struct ExtractRequest {
    /// A build folder (with build-log.txt and artifacts/), a log file, or with `mirror`
    /// a bucket path such as `logs/<job>/<id>`.
    pub build: String,
    /// A local mirror of the bucket.
    pub mirror: Option<PathBuf>,
    /// The bucket (for evidence links with `mirror`).
    pub bucket: String,
    /// A passing build's folder or log to diff against.
    pub pass: Option<PathBuf>,
    /// Excerpt texts in full (else each stops at the configured size; line ranges are
    /// always complete).
    pub all: bool,
}

impl Default for ExtractRequest {
    fn default() -> Self {
        ExtractRequest {
            build: String::new(),
            mirror: None,
            bucket: "kubernetes-ci-logs".into(),
            pass: None,
            all: false,
        }
    }
}

impl ExtractRequest {
    /// Whether the passing build is looked up in the store: with a mirror, and no
    /// passing log given.
    pub fn wants_store(&self) -> bool {
        self.mirror.is_some() && self.pass.is_none()
    }
}

/// What `extract` found.
#[derive(Debug, Clone)]
pub struct Extracted {
    /// The build: its Prow page (with a mirror) or its folder.
    pub source: String,
    /// The build log read, when there was one.
    pub log: Option<PathBuf>,
    /// The passing build's folder or log, when there was one.
    pub passing_log: Option<PathBuf>,
    /// Whether the passing log was used (lines absent from it preferred).
    pub used_passing_log: bool,
    pub first_failure_line: Option<usize>,
    pub total_lines: usize,
    /// The build log's failure lines, ascending.
    pub lines: Vec<usize>,
    pub junit_failures: usize,
    /// The log's excerpts, then each failed JUnit case's.
    pub excerpts: Vec<Excerpt>,
    /// Where an excerpt's text stops when it is cut.
    pub max_excerpt_bytes: usize,
}

/// The extraction settings of `extract` (and of `bench extract`): the library
/// defaults, chosen by cross-validation; nothing found is capped.
pub fn extract_config() -> ExtractConfig {
    ExtractConfig::default()
}

fn read_maybe(path: &Path) -> Result<Option<Vec<u8>>> {
    if !path.exists() {
        return Ok(None);
    }
    citriage_sources::read(&path.display().to_string(), &Default::default())
        .map(|f| Some(f.bytes.into_vec()))
        .map_err(|e| Error::input(e.to_string()))
}

fn find_log(dir: &Path) -> Option<PathBuf> {
    ["build-log.txt", "build-log.txt.gz"].iter().map(|n| dir.join(n)).find(|p| p.exists())
}

/// Where the build is: its log (when found), its folder and how it is named.
struct Located {
    log: Option<PathBuf>,
    dir: PathBuf,
    source: String,
}

fn locate(req: &ExtractRequest) -> Result<Located> {
    let at = match &req.mirror {
        Some(m) => m.join(req.build.trim_start_matches('/')),
        None => PathBuf::from(&req.build),
    };
    if !at.exists() {
        return Err(Error::input(format!("{}: no such build folder or log", at.display())));
    }
    let (log, dir) = if at.is_dir() {
        (find_log(&at), at.clone())
    } else {
        (Some(at.clone()), at.parent().map(Path::to_path_buf).unwrap_or_default())
    };
    let source = match &req.mirror {
        Some(_) => prow_url(&req.bucket, req.build.trim_matches('/')),
        None => dir.display().to_string(),
    };
    Ok(Located { log, dir, source })
}

/// The newest passing build of the same job started before this one, in the mirror
/// (found through the store's builds of the job).
fn stored_passing_build(store: &Store, req: &ExtractRequest) -> Result<Option<PathBuf>> {
    let (Some(mirror), parts) = (&req.mirror, req.build.trim_matches('/').split('/').collect::<Vec<_>>()) else {
        return Ok(None);
    };
    if parts.len() < 2 {
        return Ok(None);
    }
    let (job, id) = (parts[parts.len() - 2], parts[parts.len() - 1]);
    let builds = store.builds(Some(job))?;
    let Some(mine) = builds.iter().find(|b| b.build_id == id).and_then(|b| b.started) else { return Ok(None) };
    Ok(builds
        .iter()
        .rev()
        .find(|b| b.result.as_deref() == Some("SUCCESS") && b.started.is_some_and(|s| s < mine))
        .map(|p| mirror.join(&p.path)))
}

/// The JUnit files under the build's `artifacts/`, sorted.
fn junit_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.join("artifacts")];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                stack.push(p);
            } else if name.starts_with("junit") && name.ends_with(".xml") {
                found.push(p);
            }
        }
    }
    found.sort();
    found
}

/// `extract`: the build's failure lines and excerpts. `store` is where the passing
/// build is looked up when [`ExtractRequest::wants_store`] (none: no lookup).
pub fn extract(store: Option<&Store>, req: &ExtractRequest) -> Result<Extracted> {
    let at = locate(req)?;
    let cfg =
        if req.all { ExtractConfig { max_excerpt_bytes: usize::MAX, ..extract_config() } } else { extract_config() };
    let fail = match &at.log {
        Some(p) => read_maybe(p)?,
        None => None,
    };
    let passing_log = match (&req.pass, store) {
        (Some(p), _) => Some(p.clone()),
        (None, Some(store)) if req.wants_store() => stored_passing_build(store, req)?,
        _ => None,
    };
    let pass = match &passing_log {
        Some(p) if p.is_dir() => match find_log(p) {
            Some(l) => read_maybe(&l)?,
            None => None,
        },
        Some(p) => read_maybe(p)?,
        None => None,
    };
    let mut out = Extracted {
        source: at.source.clone(),
        log: at.log.clone(),
        passing_log,
        used_passing_log: false,
        first_failure_line: None,
        total_lines: 0,
        lines: Vec::new(),
        junit_failures: 0,
        excerpts: Vec::new(),
        max_excerpt_bytes: cfg.max_excerpt_bytes,
    };
    if let Some(f) = &fail {
        let log_source = match (&req.mirror, &at.log) {
            (Some(_), Some(p)) => {
                format!("{}/{}", at.source, p.file_name().map(|n| n.to_string_lossy()).unwrap_or_default())
            }
            (None, Some(p)) => p.display().to_string(),
            _ => format!("{}/build-log.txt", at.source),
        };
        let x = extract_log(f, pass.as_deref(), &log_source, &cfg);
        out.used_passing_log = x.used_pass_log;
        out.first_failure_line = x.first_failure_line;
        out.total_lines = x.total_lines;
        out.lines = x.lines;
        out.excerpts.extend(x.excerpts);
    }
    let junit = junit_files(&at.dir);
    for jf in &junit {
        let Some(bytes) = read_maybe(jf)? else { continue };
        let rel = jf.strip_prefix(&at.dir).unwrap_or(jf).display().to_string();
        let parsed = parse_junit(&bytes, &rel);
        for c in parsed.cases.iter().filter(|c| matches!(c.status, Status::Failed | Status::Error)) {
            out.junit_failures += 1;
            let text = c.failure_text.clone().unwrap_or_default();
            out.excerpts.extend(extract_junit(&text, "", &format!("{}/{rel} :: {}", at.source, c.name), &cfg));
        }
    }
    if fail.is_none() && junit.is_empty() {
        return Err(Error::input(format!("{}: no build-log.txt and no JUnit files", at.dir.display())));
    }
    Ok(out)
}
