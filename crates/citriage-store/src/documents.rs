//! Documents citriage wrote, kept in the store so the dashboard can serve them
//! without reading files: triage reports (Markdown and JSON), payload analyses and
//! verifier results. A document is identified by its kind, key and media type;
//! storing it again replaces it. `as_of` is the date the content describes, never
//! the time it was written.

use crate::{Store, StoreError};
use citriage_model::evidence::sha256_hex;
use rusqlite::{params, OptionalExtension};

/// A stored document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// `triage`, `payload`, `verify`, ...
    pub kind: String,
    /// Unique within the kind and media type: `failures/2026-11-21`, a payload tag, ...
    pub key: String,
    /// `text/markdown`, `application/json`, `text/html`.
    pub media_type: String,
    pub title: String,
    pub as_of: String,
    pub body: String,
}

/// A stored document without its body.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DocumentHeader {
    pub kind: String,
    pub key: String,
    pub media_type: String,
    pub title: String,
    pub as_of: String,
    pub bytes: u64,
    pub sha256: String,
}

impl Store {
    /// Stores a document, replacing one with the same kind, key and media type.
    pub fn put_document(&mut self, d: &Document) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO documents (kind, key, media_type, title, as_of, body, sha256)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![d.kind, d.key, d.media_type, d.title, d.as_of, d.body, sha256_hex(d.body.as_bytes())],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// The headers of the stored documents (of one kind, or all), by kind, then
    /// newest `as_of` first, then key and media type.
    pub fn documents(&self, kind: Option<&str>) -> Result<Vec<DocumentHeader>, StoreError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT kind, key, media_type, title, as_of, length(CAST(body AS BLOB)), sha256 FROM documents
                 WHERE ?1 IS NULL OR kind = ?1 ORDER BY kind, as_of DESC, key, media_type",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map(params![kind], |r| {
                Ok(DocumentHeader {
                    kind: r.get(0)?,
                    key: r.get(1)?,
                    media_type: r.get(2)?,
                    title: r.get(3)?,
                    as_of: r.get(4)?,
                    bytes: r.get::<_, i64>(5)?.max(0) as u64,
                    sha256: r.get(6)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    /// One stored document.
    pub fn document(&self, kind: &str, key: &str, media_type: &str) -> Result<Option<Document>, StoreError> {
        self.conn
            .query_row(
                "SELECT kind, key, media_type, title, as_of, body FROM documents
                 WHERE kind = ?1 AND key = ?2 AND media_type = ?3",
                params![kind, key, media_type],
                |r| {
                    Ok(Document {
                        kind: r.get(0)?,
                        key: r.get(1)?,
                        media_type: r.get(2)?,
                        title: r.get(3)?,
                        as_of: r.get(4)?,
                        body: r.get(5)?,
                    })
                },
            )
            .optional()
            .map_err(|e| self.err(e))
    }
}
