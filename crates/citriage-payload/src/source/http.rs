//! [`HttpSource`]: a live release controller (and, when configured, GitHub diffs
//! and Sippy) through citriage's HTTP layer.

use std::path::PathBuf;
use std::time::Duration;

use citriage_sources::http::{HttpClient, HttpError, HttpOptions};

use super::api::{Changelog, PayloadSource};
use crate::error::PayloadError;
use crate::jobhistory;
use crate::release::{self, ChangeLogState, PullRequest, ReleaseInfo, TagList};

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
