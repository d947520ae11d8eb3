//! Reading raw inputs from where they live: local files and HTTP(S) URLs, with
//! gzip detection, timeouts, and bounded retries on HTTP 429/5xx that honour
//! `Retry-After`. Errors name the path or URL and what went wrong. This crate returns
//! bytes; parsing happens in `citriage-formats`.

pub mod artifacts;
pub mod deck;

use std::io::Read;
use std::time::Duration;

/// Bytes read from a location.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The path or URL as given.
    pub location: String,
    /// The decoded bytes (gzip already inflated).
    pub bytes: Vec<u8>,
    /// True when the content was gzip-compressed.
    pub was_gzip: bool,
}

/// Why reading failed.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("{location}: cannot read: {source}")]
    Io { location: String, source: std::io::Error },
    #[error("{location}: HTTP {status}{hint}")]
    Http { location: String, status: u16, hint: String },
    #[error("{location}: request failed: {detail}")]
    Transport { location: String, detail: String },
    #[error("{location}: gzip data is corrupt or truncated: {source}")]
    Gzip { location: String, source: std::io::Error },
    #[error("{location}: larger than the {limit}-byte limit")]
    TooLarge { location: String, limit: u64 },
}

impl SourceError {
    /// True when the failure is the input's fault (missing file, 404, corrupt gzip),
    /// as opposed to a transient network problem.
    pub fn is_bad_input(&self) -> bool {
        match self {
            SourceError::Io { source, .. } => {
                source.kind() == std::io::ErrorKind::NotFound || source.kind() == std::io::ErrorKind::InvalidData
            }
            SourceError::Http { status, .. } => (400..500).contains(status) && *status != 429,
            SourceError::Gzip { .. } | SourceError::TooLarge { .. } => true,
            SourceError::Transport { .. } => false,
        }
    }
}

/// HTTP behaviour.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub timeout: Duration,
    /// Attempts in all (first try included) for 429, 5xx and transport errors.
    pub attempts: u32,
    /// Base backoff, doubled per attempt when the server gives no `Retry-After`.
    pub backoff: Duration,
    /// The longest `Retry-After` honoured; longer waits fail instead of hanging.
    pub max_retry_after: Duration,
    /// The largest body accepted.
    pub max_bytes: u64,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            timeout: Duration::from_secs(30),
            attempts: 4,
            backoff: Duration::from_millis(500),
            max_retry_after: Duration::from_secs(120),
            max_bytes: 2 << 30,
        }
    }
}

/// True when `location` is an HTTP(S) URL.
pub fn is_url(location: &str) -> bool {
    location.starts_with("http://") || location.starts_with("https://")
}

/// Reads a path or URL.
pub fn read(location: &str, opts: &HttpOptions) -> Result<Fetched, SourceError> {
    let raw = if is_url(location) {
        http_get(location, opts)?
    } else {
        std::fs::read(location).map_err(|source| SourceError::Io { location: location.to_string(), source })?
    };
    decode(location, raw)
}

/// Inflates gzip content (detected by its magic bytes); passes anything else through.
pub fn decode(location: &str, raw: Vec<u8>) -> Result<Fetched, SourceError> {
    if raw.len() >= 2 && raw[0] == 0x1f && raw[1] == 0x8b {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .map_err(|source| SourceError::Gzip { location: location.to_string(), source })?;
        Ok(Fetched { location: location.to_string(), bytes: out, was_gzip: true })
    } else {
        Ok(Fetched { location: location.to_string(), bytes: raw, was_gzip: false })
    }
}

fn http_get(url: &str, opts: &HttpOptions) -> Result<Vec<u8>, SourceError> {
    http_get_with(&agent(opts), url, opts)
}

/// A blocking HTTP agent configured from the options.
pub fn agent(opts: &HttpOptions) -> ureq::Agent {
    ureq::Agent::config_builder().timeout_global(Some(opts.timeout)).http_status_as_error(false).build().into()
}

/// GET with bounded retries on 429/5xx (honouring `Retry-After`) and transport errors.
pub fn http_get_with(agent: &ureq::Agent, url: &str, opts: &HttpOptions) -> Result<Vec<u8>, SourceError> {
    let mut last: Option<SourceError> = None;
    for attempt in 0..opts.attempts.max(1) {
        if attempt > 0 {
            let wait = match &last {
                Some(SourceError::Http { hint, .. }) if hint.starts_with(" (retry after ") => {
                    let secs: u64 =
                        hint.trim_start_matches(" (retry after ").trim_end_matches("s)").parse().unwrap_or(1);
                    Duration::from_secs(secs)
                }
                _ => opts.backoff * 2u32.saturating_pow(attempt - 1),
            };
            std::thread::sleep(wait);
        }
        match agent.get(url).header("Accept-Encoding", "gzip").call() {
            Err(e) => last = Some(SourceError::Transport { location: url.to_string(), detail: e.to_string() }),
            Ok(mut resp) => {
                let status = resp.status().as_u16();
                if status == 200 {
                    let mut buf = Vec::new();
                    if let Err(e) = resp.body_mut().as_reader().take(opts.max_bytes + 1).read_to_end(&mut buf) {
                        // A cut-off body is retried like a transport error.
                        last = Some(SourceError::Transport {
                            location: url.to_string(),
                            detail: format!("body read failed (truncated download?): {e}"),
                        });
                        continue;
                    }
                    if buf.len() as u64 > opts.max_bytes {
                        return Err(SourceError::TooLarge { location: url.to_string(), limit: opts.max_bytes });
                    }
                    return Ok(buf);
                }
                let retry_after = resp
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<u64>().ok());
                let retryable = status == 429 || status >= 500;
                if !retryable {
                    let hint = match status {
                        404 => " (not found)".to_string(),
                        401 | 403 => " (access denied)".to_string(),
                        _ => String::new(),
                    };
                    return Err(SourceError::Http { location: url.to_string(), status, hint });
                }
                let hint = match retry_after {
                    Some(s) if Duration::from_secs(s) <= opts.max_retry_after => format!(" (retry after {s}s)"),
                    Some(s) => {
                        return Err(SourceError::Http {
                            location: url.to_string(),
                            status,
                            hint: format!(
                                " (server asks to retry after {s}s, longer than the {}s limit)",
                                opts.max_retry_after.as_secs()
                            ),
                        })
                    }
                    None => String::new(),
                };
                last = Some(SourceError::Http { location: url.to_string(), status, hint });
            }
        }
    }
    Err(last.unwrap_or(SourceError::Transport { location: url.to_string(), detail: "no attempt made".into() }))
}
