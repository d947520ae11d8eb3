//! The crate's error type. Every variant names the file or URL it is about and
//! what was wrong with it, so a failed analysis can be traced to its input.

/// Why a payload input could not be read or understood.
#[derive(Debug, thiserror::Error)]
pub enum PayloadError {
    /// A file could not be read.
    #[error("{path}: cannot read: {source}")]
    Io { path: String, source: std::io::Error },
    /// The input exists but is not what was expected (bad JSON, wrong field types...).
    #[error("{origin}: {detail}")]
    Invalid { origin: String, detail: String },
    /// The thing asked for does not exist at the source (HTTP 404, missing file,
    /// tag not in the stream, garbage-collected payload).
    #[error("{origin}: not found{detail}")]
    NotFound { origin: String, detail: String },
    /// An HTTP request failed with a status that is not a plain 404.
    #[error("{url}: HTTP {status}{detail}")]
    Http { url: String, status: u16, detail: String },
    /// The request never produced a response (connection refused, timeout...).
    #[error("{url}: request failed: {detail}")]
    Transport { url: String, detail: String },
    /// A URL outside the configured host was requested.
    #[error("{url}: refusing to contact a host other than the configured {allowed}")]
    ForeignHost { url: String, allowed: String },
    /// The analysis options are inconsistent with the data.
    #[error("{0}")]
    Options(String),
}

impl PayloadError {
    /// Shorthand for [`PayloadError::Invalid`].
    pub fn invalid(origin: impl Into<String>, detail: impl Into<String>) -> Self {
        PayloadError::Invalid { origin: origin.into(), detail: detail.into() }
    }

    /// Shorthand for [`PayloadError::NotFound`] without detail.
    pub fn not_found(origin: impl Into<String>) -> Self {
        PayloadError::NotFound { origin: origin.into(), detail: String::new() }
    }

    /// True when the error means "this does not exist" rather than "this is broken".
    pub fn is_not_found(&self) -> bool {
        match self {
            PayloadError::NotFound { .. } => true,
            PayloadError::Io { source, .. } => source.kind() == std::io::ErrorKind::NotFound,
            PayloadError::Http { status, .. } => *status == 404 || *status == 410,
            _ => false,
        }
    }

    /// True when the failure is the input's fault (as opposed to a transient network problem).
    pub fn is_bad_input(&self) -> bool {
        match self {
            PayloadError::Transport { .. } => false,
            PayloadError::Http { status, .. } => (400..500).contains(status) && *status != 429,
            _ => true,
        }
    }
}

/// Reads a whole file, mapping the error to [`PayloadError::Io`].
pub(crate) fn read_file(path: &std::path::Path) -> Result<Vec<u8>, PayloadError> {
    std::fs::read(path).map_err(|source| PayloadError::Io { path: path.display().to_string(), source })
}

/// Reads a file that may be absent: `Ok(None)` when it does not exist.
pub(crate) fn read_optional(path: &std::path::Path) -> Result<Option<Vec<u8>>, PayloadError> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(_) if path.is_dir() => Ok(None),
        Err(source) => Err(PayloadError::Io { path: path.display().to_string(), source }),
    }
}

impl From<citriage_sources::SourceError> for PayloadError {
    /// An artifact that could not be read, in this crate's terms: HTTP statuses and
    /// transport failures keep their kind (transient or not); anything else (a name
    /// refused, a size limit, corrupt gzip) is invalid input naming the object.
    fn from(e: citriage_sources::SourceError) -> Self {
        use citriage_sources::SourceError as S;
        match e {
            S::Http { location, status, hint } => PayloadError::Http { url: location, status, detail: hint },
            S::Transport { location, detail } => PayloadError::Transport { url: location, detail },
            S::Io { location, source } => PayloadError::Io { path: location, source },
            S::Refused(h) => {
                let text = h.to_string();
                match text.split_once(": ") {
                    Some((url, detail)) => PayloadError::Transport { url: url.to_string(), detail: detail.to_string() },
                    None => PayloadError::Transport { url: String::new(), detail: text },
                }
            }
            other => {
                let text = other.to_string();
                match text.split_once(": ") {
                    Some((origin, detail)) => PayloadError::invalid(origin, detail),
                    None => PayloadError::invalid("artifact", text),
                }
            }
        }
    }
}
