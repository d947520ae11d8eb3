//! Where payload data comes from: the [`PayloadSource`] trait and two of its
//! implementations, [`HttpSource`] (a live release controller) and [`RecordedDir`]
//! (a directory of recorded API responses). The payload-snapshot layout is in
//! [`crate::snapshot`].
//!
//! ## Recorded-response layout
//!
//! Paths mirror the API under a root directory (`<root>` itself, or
//! `<root>/release-controller` when that exists):
//!
//! ```text
//! api/v1/releasestream/<stream>/tags.json                      GET .../tags
//! api/v1/releasestream/<stream>/release/<tag>.json             GET .../release/<tag>
//! api/v1/releasestream/<stream>/release/<tag>?from=<from>.json GET .../release/<tag>?from=<from>
//! ```
//!
//! Each file may also be stored without the `.json` suffix (the exact request
//! path). A `?from=` answer may be the HTML "changelog is still loading" page.
//! Optional extras beside them (in `<root>` or the world root):
//!
//! ```text
//! github/<org>/<repo>/pull/<n>.diff          PR diff (also pulls/<n>.diff, pull/<n>/code.diff)
//! github/<org>/<repo>/pull/<n>.jobs.json     presubmit job names (array, or {"statusCheckRollup":[{"name"}]})
//! job-runs/*.json | job-runs.json            job runs in the BigQuery export shape
//! sippy/api/jobs?release=<X.Y>.json | sippy/jobs.json   Sippy `/api/jobs` (pass-rate fallback)
//! ci-config/changes.json | ci-config-changes.json | openshift/ci-config-changes.json
//!                                            recorded CI-configuration changes (a `diff`
//!                                            path is resolved against the same root)
//! ```
//!
//! ## HTTP
//!
//! [`HttpSource`] is a thin user of citriage's HTTP layer
//! ([`citriage_sources::http`]): it contacts only the configured release-controller
//! origin (and, when configured, the GitHub diff and Sippy origins), follows redirects
//! only within an origin, times out, and retries 429 / 5xx / transport errors a
//! bounded number of times within the command's retry budget, waiting for
//! `Retry-After` when the server gives one (up to a cap).

use std::path::{Path, PathBuf};
use std::time::Duration;

use citriage_sources::http::{HttpClient, HttpError, HttpOptions};

use crate::ciconfig::CiConfigChange;
use crate::error::{read_optional, PayloadError};
use citriage_model::time::Epoch;

pub mod ci_config;
use crate::jobhistory::{self, JobRun};
use crate::release::{self, ChangeLogState, NodeImageStream, PullRequest, ReleaseInfo, TagList};

/// The answer to a changelog request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changelog {
    pub state: ChangeLogState,
    pub node_image_streams: Vec<NodeImageStream>,
    /// The file or URL it came from.
    pub origin: String,
}

/// The window CI-configuration changes are asked for: commits in `[since, until]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CiWindow {
    pub since: Epoch,
    pub until: Epoch,
}

/// What a source knows of the CI-configuration changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CiConfigAnswer {
    /// The source has no list of them.
    Unknown,
    /// These are the changes.
    Known(Vec<CiConfigChange>),
    /// They could not be read (a checkout git cannot read): a gap of the analysis.
    Unreadable(String),
}

/// A source of release-controller data and the extras the analysis can use.
pub trait PayloadSource {
    /// A one-line description (base URL, directory).
    fn describe(&self) -> String;

    /// The stream's tags, newest first.
    fn tags(&self, stream: &str) -> Result<TagList, PayloadError>;

    /// Release info of one tag.
    fn release(&self, stream: &str, tag: &str) -> Result<ReleaseInfo, PayloadError>;

    /// The changelog of `tag` relative to `from` (`?from=`); `NotFound` when the
    /// source cannot answer for this pair.
    fn changelog(&self, stream: &str, tag: &str, from: &str) -> Result<Changelog, PayloadError>;

    /// The unified diff of a pull request, when available.
    fn pr_diff(&self, _pr: &PullRequest) -> Result<Option<String>, PayloadError> {
        Ok(None)
    }

    /// The presubmit job names that ran on a pull request, when known.
    fn pr_presubmits(&self, _pr: &PullRequest) -> Result<Option<Vec<String>>, PayloadError> {
        Ok(None)
    }

    /// Recorded job runs (BigQuery export shape), when the source has them.
    fn job_runs(&self, _stream: &str) -> Result<Option<Vec<JobRun>>, PayloadError> {
        Ok(None)
    }

    /// The CI-configuration changes of the window, when the source has them (a
    /// recorded list may answer whole: the analysis filters by date).
    fn ci_config_changes(&self, _window: &CiWindow) -> Result<CiConfigAnswer, PayloadError> {
        Ok(CiConfigAnswer::Unknown)
    }

    /// Sippy's per-job pass rates for a release (`4.22`), when available.
    fn sippy_jobs(&self, _release: &str) -> Result<Option<Vec<jobhistory::SippyJob>>, PayloadError> {
        Ok(None)
    }

    /// RHCOS RPM changelog text for a variant between two payloads, when available.
    fn rpm_changelog(&self, _tag: &str, _variant: &str, _from: &str) -> Result<Option<String>, PayloadError> {
        Ok(None)
    }
}

// ---------------------------------------------------------------------------
// Recorded directory
// ---------------------------------------------------------------------------

/// Recorded API responses in a directory (see the module docs for the layout).
pub struct RecordedDir {
    rc_root: PathBuf,
    extra_roots: Vec<PathBuf>,
}

impl RecordedDir {
    /// Opens a recorded directory. When `<root>/release-controller/api` exists the
    /// responses are read from there and `<root>` is searched for the extras.
    pub fn open(root: impl Into<PathBuf>) -> RecordedDir {
        let root: PathBuf = root.into();
        let rc = root.join("release-controller");
        if rc.join("api").is_dir() {
            RecordedDir { rc_root: rc.clone(), extra_roots: vec![root, rc] }
        } else {
            RecordedDir { rc_root: root.clone(), extra_roots: vec![root] }
        }
    }

    fn stream_dir(&self, stream: &str) -> PathBuf {
        self.rc_root.join("api").join("v1").join("releasestream").join(stream)
    }

    fn read_first(&self, candidates: &[PathBuf]) -> Result<Option<(Vec<u8>, String)>, PayloadError> {
        for c in candidates {
            if let Some(b) = read_optional(c)? {
                return Ok(Some((b, c.display().to_string())));
            }
        }
        Ok(None)
    }

    fn extra(&self, rel: &[&str]) -> Vec<PathBuf> {
        self.extra_roots.iter().map(|r| rel.iter().fold(r.clone(), |acc, s| acc.join(s))).collect()
    }
}

fn with_json(p: PathBuf) -> [PathBuf; 2] {
    let mut j = p.clone().into_os_string();
    j.push(".json");
    [PathBuf::from(j), p]
}

/// Checks that a path component from the data is safe to join.
fn safe_component(s: &str) -> bool {
    !s.is_empty() && s != "." && s != ".." && !s.contains('/') && !s.contains('\\') && !s.contains('\0')
}

impl PayloadSource for RecordedDir {
    fn describe(&self) -> String {
        format!("recorded responses in {}", self.rc_root.display())
    }

    fn tags(&self, stream: &str) -> Result<TagList, PayloadError> {
        if !safe_component(stream) {
            return Err(PayloadError::invalid(stream, "not a valid stream name"));
        }
        let p = self.stream_dir(stream).join("tags");
        match self.read_first(&with_json(p.clone()))? {
            Some((b, origin)) => release::parse_tag_list(&b, &origin),
            None => Err(PayloadError::not_found(format!("{}.json", p.display()))),
        }
    }

    fn release(&self, stream: &str, tag: &str) -> Result<ReleaseInfo, PayloadError> {
        if !safe_component(stream) || !safe_component(tag) {
            return Err(PayloadError::invalid(tag, "not a valid stream or tag name"));
        }
        let p = self.stream_dir(stream).join("release").join(tag);
        match self.read_first(&with_json(p.clone()))? {
            Some((b, origin)) => release::parse_release_info(&b, &origin),
            None => Err(PayloadError::not_found(format!("{}.json", p.display()))),
        }
    }

    fn changelog(&self, stream: &str, tag: &str, from: &str) -> Result<Changelog, PayloadError> {
        if !safe_component(stream) || !safe_component(tag) || !safe_component(from) {
            return Err(PayloadError::invalid(tag, "not a valid stream or tag name"));
        }
        let p = self.stream_dir(stream).join("release").join(format!("{tag}?from={from}"));
        match self.read_first(&with_json(p.clone()))? {
            Some((b, origin)) => {
                let (state, nis) = release::parse_changelog_response(&b, &origin)?;
                Ok(Changelog { state, node_image_streams: nis, origin })
            }
            None => Err(PayloadError::not_found(format!("{}.json", p.display()))),
        }
    }

    fn pr_diff(&self, pr: &PullRequest) -> Result<Option<String>, PayloadError> {
        if !safe_component(&pr.org) || !safe_component(&pr.repo) {
            return Ok(None);
        }
        let n = pr.number.to_string();
        let mut cands = Vec::new();
        for rel in [
            vec!["github", &pr.org, &pr.repo, "pull", &format!("{n}.diff")],
            vec!["github", &pr.org, &pr.repo, "pulls", &format!("{n}.diff")],
            vec!["github", &pr.org, &pr.repo, "pull", &n, "code.diff"],
        ] {
            let rel: Vec<&str> = rel.iter().map(|s| s.as_ref()).collect();
            cands.extend(self.extra(&rel));
        }
        Ok(self.read_first(&cands)?.map(|(b, _)| String::from_utf8_lossy(&b).into_owned()))
    }

    fn pr_presubmits(&self, pr: &PullRequest) -> Result<Option<Vec<String>>, PayloadError> {
        if !safe_component(&pr.org) || !safe_component(&pr.repo) {
            return Ok(None);
        }
        let name = format!("{}.jobs.json", pr.number);
        let cands = self.extra(&["github", &pr.org, &pr.repo, "pull", &name]);
        match self.read_first(&cands)? {
            Some((b, origin)) => Ok(Some(parse_presubmits(&b, &origin)?)),
            None => Ok(None),
        }
    }

    fn job_runs(&self, _stream: &str) -> Result<Option<Vec<JobRun>>, PayloadError> {
        let mut files: Vec<PathBuf> = Vec::new();
        for root in &self.extra_roots {
            let single = root.join("job-runs.json");
            if single.is_file() {
                files.push(single);
            }
            if let Ok(rd) = std::fs::read_dir(root.join("job-runs")) {
                let mut v: Vec<PathBuf> =
                    rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "json")).collect();
                v.sort();
                files.extend(v);
            }
        }
        files.dedup();
        if files.is_empty() {
            return Ok(None);
        }
        let mut runs = Vec::new();
        for f in files {
            let b = crate::error::read_file(&f)?;
            runs.extend(jobhistory::parse_job_runs(&b, &f.display().to_string())?);
        }
        Ok(Some(runs))
    }

    fn sippy_jobs(&self, release: &str) -> Result<Option<Vec<jobhistory::SippyJob>>, PayloadError> {
        let mut cands = self.extra(&["sippy", "api", &format!("jobs?release={release}.json")]);
        cands.extend(self.extra(&["sippy", "jobs.json"]));
        match self.read_first(&cands)? {
            Some((b, origin)) => Ok(Some(jobhistory::parse_sippy_jobs(&b, &origin)?)),
            None => Ok(None),
        }
    }

    fn ci_config_changes(&self, _window: &CiWindow) -> Result<CiConfigAnswer, PayloadError> {
        ci_config::read_recorded_in(&self.extra_roots)
    }
}

/// Parses presubmit job names: a JSON array of names, or `{"statusCheckRollup": [{"name"}]}`.
pub fn parse_presubmits(bytes: &[u8], origin: &str) -> Result<Vec<String>, PayloadError> {
    let v: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| PayloadError::invalid(origin, format!("malformed JSON: {e}")))?;
    let arr = match &v {
        serde_json::Value::Array(a) => a.clone(),
        serde_json::Value::Object(o) => {
            o.get("statusCheckRollup").and_then(|x| x.as_array()).cloned().unwrap_or_default()
        }
        _ => Vec::new(),
    };
    let mut names: Vec<String> = arr
        .iter()
        .filter_map(|x| {
            x.as_str().map(str::to_string).or_else(|| x.get("name").and_then(|n| n.as_str()).map(str::to_string))
        })
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

// ---------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------

/// HTTP behaviour of [`HttpSource`].
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Whole-request timeout.
    pub timeout: Duration,
    /// Attempts in all (first try included) for 429, 5xx and transport errors.
    pub attempts: u32,
    /// Base backoff when the server gives no `Retry-After`, doubled per attempt.
    pub backoff: Duration,
    /// The longest `Retry-After` honoured; a longer one fails the request.
    pub max_retry_after: Duration,
    /// Largest body accepted.
    pub max_bytes: u64,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            timeout: Duration::from_secs(90),
            attempts: 4,
            backoff: Duration::from_secs(2),
            max_retry_after: Duration::from_secs(120),
            max_bytes: 256 << 20,
        }
    }
}

impl HttpConfig {
    /// The HTTP layer's options for this configuration.
    pub fn options(&self) -> HttpOptions {
        HttpOptions {
            timeout: self.timeout,
            attempts: self.attempts,
            backoff: self.backoff,
            max_retry_after: self.max_retry_after,
            max_bytes: self.max_bytes,
            ..HttpOptions::default()
        }
    }
}

/// A live release controller at a configured base URL
/// (e.g. `https://amd64.ocp.releases.ci.openshift.org`).
pub struct HttpSource {
    base: String,
    github_diff_base: Option<String>,
    sippy_base: Option<String>,
    http: HttpClient,
    record_to: Option<PathBuf>,
}

/// Percent-encodes a path segment or query value.
pub use citriage_sources::http::percent_encode as encode_component;

fn bad_base(base: &str) -> PayloadError {
    PayloadError::invalid(base, "not an http(s) URL with a host")
}

impl HttpSource {
    /// A source for the release controller at `base_url`.
    pub fn new(base_url: &str, config: HttpConfig) -> Result<HttpSource, PayloadError> {
        let base = base_url.trim_end_matches('/').to_string();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(PayloadError::invalid(base_url, "the release controller base must be an http(s) URL"));
        }
        let http = HttpClient::new(config.options()).restricted_to(&base).map_err(|_| bad_base(base_url))?;
        Ok(HttpSource { base, github_diff_base: None, sippy_base: None, http, record_to: None })
    }

    /// Also fetch PR diffs as `<base>/<org>/<repo>/pull/<n>.diff` (e.g.
    /// `https://patch-diff.githubusercontent.com/raw`); that origin becomes the
    /// only other one contacted.
    pub fn with_github_diffs(mut self, base: &str) -> Result<HttpSource, PayloadError> {
        let b = base.trim_end_matches('/').to_string();
        self.http.allow(&b).map_err(|_| bad_base(base))?;
        self.github_diff_base = Some(b);
        Ok(self)
    }

    /// Also read per-job pass rates from Sippy at `base`
    /// (e.g. `https://sippy.dptools.openshift.org`); that origin becomes allowed.
    pub fn with_sippy(mut self, base: &str) -> Result<HttpSource, PayloadError> {
        let b = base.trim_end_matches('/').to_string();
        self.http.allow(&b).map_err(|_| bad_base(base))?;
        self.sippy_base = Some(b);
        Ok(self)
    }

    /// Saves every successful response under `dir` in the recorded-response
    /// layout, so the run can be replayed offline with [`RecordedDir`].
    pub fn recording_to(mut self, dir: impl Into<PathBuf>) -> HttpSource {
        self.record_to = Some(dir.into());
        self
    }

    fn record(&self, rel: &str, body: &[u8]) {
        let Some(dir) = &self.record_to else { return };
        let p = rel.split('/').filter(|s| !s.is_empty() && *s != "..").fold(dir.clone(), |acc, s| acc.join(s));
        if let Some(parent) = p.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let mut name = p.into_os_string();
        name.push(".json");
        let _ = std::fs::write(PathBuf::from(name), body);
    }

    /// GETs a URL on an allowed origin through the HTTP layer. Returns the body of a 200.
    pub fn get(&self, url: &str) -> Result<Vec<u8>, PayloadError> {
        let r = self.http.send(&citriage_sources::http::Request::get(url).header("Accept", "application/json"));
        let r = r.map_err(|e| failed(e, self.http.options().max_bytes))?;
        match r.status {
            200 => Ok(r.body),
            404 | 410 => {
                Err(PayloadError::NotFound { origin: url.to_string(), detail: format!(" (HTTP {})", r.status) })
            }
            status => {
                let detail = match status {
                    401 | 403 => " (access denied)".to_string(),
                    300..=399 => " (a redirect without a location)".to_string(),
                    _ => String::new(),
                };
                Err(PayloadError::Http { url: url.to_string(), status, detail })
            }
        }
    }

    fn api_path(stream: &str, rest: &str) -> String {
        format!("api/v1/releasestream/{}/{rest}", encode_component(stream))
    }
}

/// A failed request in this crate's terms.
fn failed(e: HttpError, max_bytes: u64) -> PayloadError {
    match e {
        HttpError::Transport { url, detail } => PayloadError::Transport { url, detail },
        HttpError::ForeignOrigin { url, allowed } => PayloadError::ForeignHost { url, allowed },
        HttpError::TooLarge { url, .. } => {
            PayloadError::invalid(url, format!("larger than the {max_bytes}-byte limit"))
        }
        HttpError::GaveUp { url, status, attempts, .. } => {
            PayloadError::Http { url, status, detail: format!(" (still after {attempts} attempts)") }
        }
        HttpError::WaitTooLong { url, status, wait_secs, limit_secs, .. } => PayloadError::Http {
            url,
            status: status.unwrap_or(429),
            detail: format!(" (server asks to retry after {wait_secs}s, longer than the {limit_secs}s limit)"),
        },
        HttpError::CrossOrigin { url, status, to } => {
            PayloadError::Http { url, status, detail: format!(" (redirect to another origin refused: {to})") }
        }
        other => {
            let url = match &other {
                HttpError::BudgetSpent { url, .. }
                | HttpError::TooManyRedirects { url, .. }
                | HttpError::RepeatedPage { url, .. }
                | HttpError::TooManyPages { url, .. } => url.clone(),
                _ => String::new(),
            };
            PayloadError::Transport { url, detail: other.to_string() }
        }
    }
}

impl PayloadSource for HttpSource {
    fn describe(&self) -> String {
        format!("release controller at {}", self.base)
    }

    fn tags(&self, stream: &str) -> Result<TagList, PayloadError> {
        let rel = Self::api_path(stream, "tags");
        let url = format!("{}/{rel}", self.base);
        let b = self.get(&url)?;
        let list = release::parse_tag_list(&b, &url)?;
        self.record(&rel, &b);
        Ok(list)
    }

    fn release(&self, stream: &str, tag: &str) -> Result<ReleaseInfo, PayloadError> {
        let rel = Self::api_path(stream, &format!("release/{}", encode_component(tag)));
        let url = format!("{}/{rel}", self.base);
        let b = self.get(&url)?;
        let info = release::parse_release_info(&b, &url)?;
        self.record(&rel, &b);
        Ok(info)
    }

    fn changelog(&self, stream: &str, tag: &str, from: &str) -> Result<Changelog, PayloadError> {
        let rel = Self::api_path(stream, &format!("release/{}?from={}", encode_component(tag), encode_component(from)));
        let url = format!("{}/{rel}", self.base);
        let b = self.get(&url)?;
        let (state, nis) = release::parse_changelog_response(&b, &url)?;
        if !matches!(state, ChangeLogState::Loading(_)) {
            self.record(&rel, &b);
        }
        Ok(Changelog { state, node_image_streams: nis, origin: url })
    }

    fn sippy_jobs(&self, release: &str) -> Result<Option<Vec<jobhistory::SippyJob>>, PayloadError> {
        let Some(base) = &self.sippy_base else { return Ok(None) };
        let url = format!("{base}/api/jobs?release={}", encode_component(release));
        let b = self.get(&url)?;
        Ok(Some(jobhistory::parse_sippy_jobs(&b, &url)?))
    }

    fn pr_diff(&self, pr: &PullRequest) -> Result<Option<String>, PayloadError> {
        let Some(base) = &self.github_diff_base else { return Ok(None) };
        let url =
            format!("{base}/{}/{}/pull/{}.diff", encode_component(&pr.org), encode_component(&pr.repo), pr.number);
        match self.get(&url) {
            Ok(b) => Ok(Some(String::from_utf8_lossy(&b).into_owned())),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// Reads a file relative to a base directory, refusing paths that leave it.
pub(crate) fn read_under(base: &Path, rel: &str) -> Result<Option<Vec<u8>>, PayloadError> {
    if rel.split('/').any(|s| s == "..") || rel.starts_with('/') {
        return Err(PayloadError::invalid(rel, "path leaves the snapshot directory"));
    }
    read_optional(&rel.split('/').filter(|s| !s.is_empty()).fold(base.to_path_buf(), |acc, s| acc.join(s)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_encoding() {
        assert!(HttpSource::new("https://a.b:8080/x", HttpConfig::default()).is_ok());
        assert!(HttpSource::new("https:///x", HttpConfig::default()).is_err());
        assert_eq!(encode_component("4.22.0-0.nightly"), "4.22.0-0.nightly");
        assert_eq!(encode_component("a b/c"), "a%20b%2Fc");
    }

    #[test]
    fn foreign_hosts_refused() {
        let s = HttpSource::new("http://127.0.0.1:9", HttpConfig::default()).unwrap();
        let e = s.get("http://example.com/x").unwrap_err();
        assert!(matches!(e, PayloadError::ForeignHost { .. }), "{e}");
    }
}
