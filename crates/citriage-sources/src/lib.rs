//! Reading raw inputs from where they live: local files and HTTP(S) URLs, with gzip
//! detection and size limits. Errors name the path or URL and what went wrong. This
//! crate returns bytes; parsing happens in `citriage-formats`.
//!
//! [`http`] is citriage's one HTTP client layer (timeouts, retry budget,
//! `Retry-After`, rate limits, size limits, same-origin redirects, page-token checks,
//! caching hooks, the token rule); the GitHub client and the release-controller source
//! use it too.

pub mod artifacts;
pub mod deck;
pub mod http;
pub mod paths;
pub mod testgrid;

use http::{read_counted, read_counted_carrying, BodyStream, HttpClient, HttpError, ReadLimit};
pub use http::{Body, HttpOptions};
use std::sync::Arc;

/// Bytes read from a location.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The path or URL as given.
    pub location: String,
    /// The decoded bytes (gzip already inflated), counted against the process's
    /// memory budget until dropped.
    pub bytes: Body,
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
    /// A gzip body that inflates past the limit (a decompression bomb, or simply too big).
    #[error("{location}: gzip content inflates to more than the {limit}-byte limit; not read")]
    Inflated { location: String, limit: u64 },
    /// A body larger than the process's whole memory budget for bodies in flight.
    #[error("{location}: larger than the process's memory budget for bodies in flight ({budget} bytes; CITRIAGE_MEMORY_BUDGET_MIB raises it)")]
    OverBudget { location: String, budget: u64 },
    #[error("{location}: larger than the {limit}-byte limit")]
    TooLarge { location: String, limit: u64 },
    /// A name from remote data that would lead outside its root.
    #[error("{location}: refused object name {name:?}: {reason}")]
    UnsafeName { location: String, name: String, reason: String },
    /// The HTTP policy refused to go on: a wait longer than allowed, the retry budget
    /// spent, a redirect to another origin, a listing that repeats itself.
    #[error("{0}")]
    Refused(HttpError),
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
            SourceError::Gzip { .. }
            | SourceError::TooLarge { .. }
            | SourceError::UnsafeName { .. }
            | SourceError::Inflated { .. }
            | SourceError::OverBudget { .. } => true,
            SourceError::Transport { .. } | SourceError::Refused(_) => false,
        }
    }

    /// A name refused by [`paths::check_name`] (or leading out of a mirror).
    pub fn unsafe_name(location: &str, name: &str, reason: &str) -> SourceError {
        SourceError::UnsafeName { location: location.to_string(), name: name.to_string(), reason: reason.to_string() }
    }

    /// A failed request, in this crate's terms.
    pub fn from_http(e: HttpError) -> SourceError {
        match e {
            HttpError::Transport { url, detail } => SourceError::Transport { location: url, detail },
            HttpError::TooLarge { url, limit } => SourceError::TooLarge { location: url, limit },
            HttpError::OverBudget { url, budget } => SourceError::OverBudget { location: url, budget },
            HttpError::GaveUp { url, status, attempts, .. } => {
                SourceError::Http { location: url, status, hint: format!(" (still after {attempts} attempts)") }
            }
            HttpError::WaitTooLong { url, status: Some(status), wait_secs, limit_secs, .. } => SourceError::Http {
                location: url,
                status,
                hint: format!(" (server asks to retry after {wait_secs}s, longer than the {limit_secs}s limit)"),
            },
            other => SourceError::Refused(other),
        }
    }

    /// A final HTTP answer other than 200, in this crate's terms.
    pub fn from_status(url: &str, status: u16) -> SourceError {
        let hint = match status {
            404 => " (not found)",
            401 | 403 => " (access denied)",
            _ => "",
        };
        SourceError::Http { location: url.to_string(), status, hint: hint.to_string() }
    }
}

/// True when `location` is an HTTP(S) URL.
pub fn is_url(location: &str) -> bool {
    location.starts_with("http://") || location.starts_with("https://")
}

/// Reads a path or URL (at most `opts.max_bytes`, inflated).
pub fn read(location: &str, opts: &HttpOptions) -> Result<Fetched, SourceError> {
    let raw = if is_url(location) {
        http_get(&HttpClient::new(opts.clone()), location)?.ok_or_else(|| SourceError::from_status(location, 404))?
    } else {
        read_file(std::path::Path::new(location), opts.max_bytes)?
    };
    decode_limited(location, raw, opts.max_bytes)
}

/// A stream of `raw` (a file, a body being read): gzip content (detected by its magic
/// bytes) is inflated as it is read; more than `limit` bytes (inflated or not) is an
/// I/O error naming `location` and the limit, as `decode_limited` says it. Holds a
/// buffer, never the content. Every error of a read carries the [`SourceError`] it is
/// ([`source_error`]): [`SourceError::Inflated`], [`SourceError::TooLarge`],
/// [`SourceError::Gzip`], a body cut off for good as the HTTP error, else
/// [`SourceError::Io`].
pub fn stream_limited(
    location: &str,
    raw: impl std::io::Read + Send + 'static,
    limit: u64,
) -> Result<Box<dyn std::io::BufRead + Send>, SourceError> {
    use std::io::BufRead;
    let mut raw = std::io::BufReader::with_capacity(64 << 10, raw);
    let head = raw.fill_buf().map_err(|e| classify(location, false, e))?;
    let gzip = head.len() >= 2 && head[0] == 0x1f && head[1] == 0x8b;
    let limited = |r: Box<dyn std::io::Read + Send>, what: &'static str| Limited {
        inner: r,
        left: limit,
        limit,
        location: location.to_string(),
        what,
    };
    Ok(if gzip {
        let gz = flate2::read::MultiGzDecoder::new(raw);
        Box::new(std::io::BufReader::with_capacity(64 << 10, limited(Box::new(gz), "gzip content inflates to")))
    } else {
        Box::new(std::io::BufReader::with_capacity(64 << 10, limited(Box::new(raw), "the object holds")))
    })
}

/// A stream of `raw` read as it is (no gzip detection), up to `limit` bytes, with the
/// errors of [`stream_limited`].
pub(crate) fn stream_plain(
    location: &str,
    raw: impl std::io::Read + Send + 'static,
    limit: u64,
) -> Result<Box<dyn std::io::BufRead + Send>, SourceError> {
    let limited =
        Limited { inner: Box::new(raw), left: limit, limit, location: location.to_string(), what: "the object holds" };
    Ok(Box::new(std::io::BufReader::with_capacity(64 << 10, limited)))
}

/// A reader that fails once it has given `limit` bytes and there are more. Its errors
/// carry a [`SourceError`] naming the location (see [`source_error`]).
struct Limited {
    inner: Box<dyn std::io::Read + Send>,
    left: u64,
    limit: u64,
    location: String,
    what: &'static str,
}

impl Limited {
    fn gzip(&self) -> bool {
        self.what.starts_with("gzip")
    }

    /// An error of the stream read, as the [`SourceError`] it is.
    fn typed(&self, e: std::io::Error) -> std::io::Error {
        if e.kind() == std::io::ErrorKind::Interrupted {
            return e;
        }
        std::io::Error::other(classify(&self.location, self.gzip(), e))
    }
}

/// The [`SourceError`] an error reading `location` is: the one it carries, an HTTP
/// error it carries, else corrupt gzip (when `gzip`) or an I/O error.
fn classify(location: &str, gzip: bool, e: std::io::Error) -> SourceError {
    let e = match source_error(e) {
        Ok(s) => return s,
        Err(e) => e,
    };
    if e.get_ref().is_some_and(|i| i.is::<HttpError>()) {
        if let Some(Ok(h)) = e.into_inner().map(|i| i.downcast::<HttpError>()) {
            return SourceError::from_http(*h);
        }
        return SourceError::Io { location: location.to_string(), source: std::io::ErrorKind::Other.into() };
    }
    let location = location.to_string();
    if gzip {
        SourceError::Gzip { location, source: e }
    } else {
        SourceError::Io { location, source: e }
    }
}

impl std::io::Read for Limited {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe).map_err(|e| self.typed(e))? {
                0 => Ok(0),
                _ => {
                    let (location, limit) = (self.location.clone(), self.limit);
                    Err(std::io::Error::other(if self.gzip() {
                        SourceError::Inflated { location, limit }
                    } else {
                        SourceError::TooLarge { location, limit }
                    }))
                }
            };
        }
        let want = buf.len().min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want]).map_err(|e| self.typed(e))?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// The [`SourceError`] an I/O error of a stream from this crate carries ([`stream_limited`],
/// [`ArtifactSource::open`](artifacts::ArtifactSource::open)): a body cut off for good,
/// a gzip bomb, an object over the size limit, corrupt gzip. `Err` gives back an error
/// that carries none.
pub fn source_error(e: std::io::Error) -> Result<SourceError, std::io::Error> {
    if !e.get_ref().is_some_and(|i| i.is::<SourceError>()) {
        return Err(e);
    }
    match e.into_inner().map(|i| i.downcast::<SourceError>()) {
        Some(Ok(s)) => Ok(*s),
        Some(Err(other)) => Err(std::io::Error::other(other)),
        None => Err(std::io::Error::from(std::io::ErrorKind::Other)),
    }
}

/// GETs a URL through a client as a stream ([`HttpClient::get_stream`]): the body of a
/// 200, `None` for a 404, an error for any other answer. A cut transfer is resumed by
/// the stream; one that cannot be fails a read with the [`SourceError`] saying so.
pub fn http_stream(client: &Arc<HttpClient>, url: &str) -> Result<Option<BodyStream>, SourceError> {
    match client.get_stream(url).map_err(SourceError::from_http)? {
        Ok(body) => Ok(Some(body)),
        Err(r) if r.status == 404 => Ok(None),
        Err(r) => Err(SourceError::from_status(url, r.status)),
    }
}

/// Reads a file of at most `limit` bytes, counted against the memory budget.
pub fn read_file(path: &std::path::Path, limit: u64) -> Result<Body, SourceError> {
    let location = || path.display().to_string();
    let mut f = std::fs::File::open(path).map_err(|source| SourceError::Io { location: location(), source })?;
    let hint = f.metadata().ok().map(|m| m.len());
    read_counted(&mut f, limit, hint).map_err(|e| match e {
        ReadLimit::TooLarge { limit } => SourceError::TooLarge { location: location(), limit },
        ReadLimit::OverBudget { budget } => SourceError::OverBudget { location: location(), budget },
        ReadLimit::Io(source) => SourceError::Io { location: location(), source },
    })
}

/// GETs a URL through a client: the body of a 200 (counted against the memory budget
/// until dropped), `None` for a 404, an error for any other answer.
pub fn http_get(client: &HttpClient, url: &str) -> Result<Option<Body>, SourceError> {
    match client.get_body(url).map_err(SourceError::from_http)? {
        Ok(body) => Ok(Some(body)),
        Err(r) if r.status == 404 => Ok(None),
        Err(r) => Err(SourceError::from_status(url, r.status)),
    }
}

/// Inflates gzip content (detected by its magic bytes) up to the default size limit;
/// passes anything else through.
pub fn decode(location: &str, raw: impl Into<Body>) -> Result<Fetched, SourceError> {
    decode_limited(location, raw, http::DEFAULT_MAX_BYTES)
}

/// Inflates gzip content (detected by its magic bytes) up to `limit` bytes, counted
/// against the memory budget as it grows; passes anything else through. A body that
/// inflates past the limit is [`SourceError::Inflated`], naming the location and the
/// limit.
pub fn decode_limited(location: &str, raw: impl Into<Body>, limit: u64) -> Result<Fetched, SourceError> {
    let mut raw: Body = raw.into();
    if raw.len() >= 2 && raw[0] == 0x1f && raw[1] == 0x8b {
        let carried = raw.take_hold();
        let mut gz = flate2::read::MultiGzDecoder::new(&raw[..]);
        let out = read_counted_carrying(&mut gz, limit, None, carried).map_err(|e| match e {
            ReadLimit::TooLarge { limit } => SourceError::Inflated { location: location.to_string(), limit },
            ReadLimit::OverBudget { budget } => SourceError::OverBudget { location: location.to_string(), budget },
            ReadLimit::Io(source) => SourceError::Gzip { location: location.to_string(), source },
        })?;
        drop(gz);
        drop(raw);
        let mut out = out;
        let mut hold = out.take_hold();
        hold.shrink_to(out.len() as u64);
        let out = Body::with_hold(out.into_vec(), hold);
        Ok(Fetched { location: location.to_string(), bytes: out, was_gzip: true })
    } else {
        Ok(Fetched { location: location.to_string(), bytes: raw, was_gzip: false })
    }
}
