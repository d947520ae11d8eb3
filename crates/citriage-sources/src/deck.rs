//! Deck's job-history pages (`/job-history/gs/<bucket>/<logs/job>`, 20 builds a page,
//! newest first, older pages through `?buildId=<id>`), over HTTP from a configured
//! Deck base URL or from a local folder that stores each page as
//! `<root>/job-history/gs/<bucket>/<job path>/index.html` and `buildId=<id>.html`.
//! This module returns page bytes; `citriage-formats` parses them.

use crate::http::HttpClient;
use crate::{http_get, HttpOptions, SourceError};
use std::path::PathBuf;

/// Where job-history pages come from.
pub enum DeckPages {
    /// A Deck instance, e.g. `https://prow.k8s.io` (the only origin contacted).
    Http { base: String, client: Box<HttpClient> },
    /// A folder holding recorded pages.
    Local { root: PathBuf },
}

impl DeckPages {
    /// HTTP pages from a Deck base URL.
    pub fn http(base: &str, opts: HttpOptions) -> DeckPages {
        let base = base.trim_end_matches('/').to_string();
        let mut client = HttpClient::new(opts);
        let _ = client.allow(&base);
        DeckPages::Http { base, client: Box::new(client) }
    }

    /// Recorded pages under a folder.
    pub fn local(root: impl Into<PathBuf>) -> DeckPages {
        DeckPages::Local { root: root.into() }
    }

    /// One page: the newest (`build_id` = None) or the one after `build_id`.
    /// `job_path` is `logs/<job>` or `pr-logs/directory/<job>`. `Ok(None)` when absent.
    pub fn page(&self, bucket: &str, job_path: &str, build_id: Option<&str>) -> Result<Option<Vec<u8>>, SourceError> {
        match self {
            DeckPages::Http { base, client } => {
                let mut url = format!("{base}/job-history/gs/{bucket}/{job_path}");
                if let Some(id) = build_id {
                    url.push_str(&format!("?buildId={id}"));
                }
                http_get(client, &url).map(|b| b.map(crate::Body::into_vec))
            }
            DeckPages::Local { root } => {
                let dir = root.join("job-history/gs").join(bucket).join(job_path);
                let file = match build_id {
                    None => dir.join("index.html"),
                    Some(id) => dir.join(format!("buildId={id}.html")),
                };
                match std::fs::read(&file) {
                    Ok(b) => Ok(Some(b)),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(source) => Err(SourceError::Io { location: file.display().to_string(), source }),
                }
            }
        }
    }

    /// Describes the source for messages.
    pub fn describe(&self) -> String {
        match self {
            DeckPages::Http { base, .. } => format!("Deck {base}"),
            DeckPages::Local { root } => format!("recorded job history {}", root.display()),
        }
    }
}
