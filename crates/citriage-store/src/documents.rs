//! Documents citriage wrote, kept in the store so the dashboard can serve them
//! without reading files: triage reports (Markdown and JSON), payload analyses and
//! verifier results. A document is identified by its kind, key and media type;
//! storing it again replaces it. `as_of` is the date the content describes, never
//! the time it was written.

use crate::db::{vals, Exec};
use crate::{Store, StoreError};
use citriage_model::evidence::sha256_hex;

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
        let sha = sha256_hex(d.body.as_bytes());
        self.conn
            .write(&mut |tx| {
                tx.exec(
                    "INSERT INTO documents (kind, key, media_type, title, as_of, body, sha256)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                     ON CONFLICT (kind, key, media_type) DO UPDATE SET title = excluded.title,
                        as_of = excluded.as_of, body = excluded.body, sha256 = excluded.sha256",
                    vals![&d.kind, &d.key, &d.media_type, &d.title, &d.as_of, &d.body, sha.as_str()],
                )
            })
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// The headers of the stored documents (of one kind, or all), by kind, then
    /// newest `as_of` first, then key and media type.
    pub fn documents(&self, kind: Option<&str>) -> Result<Vec<DocumentHeader>, StoreError> {
        self.conn
            .reader()
            .rows(
                "SELECT kind, key, media_type, title, as_of, octet_length(body), sha256 FROM documents
                 WHERE CAST(?1 AS TEXT) IS NULL OR kind = ?1 ORDER BY kind, as_of DESC, key, media_type",
                vals![kind],
                |r| {
                    Ok(DocumentHeader {
                        kind: r.string(0)?,
                        key: r.string(1)?,
                        media_type: r.string(2)?,
                        title: r.string(3)?,
                        as_of: r.string(4)?,
                        bytes: r.i64(5)?.max(0) as u64,
                        sha256: r.string(6)?,
                    })
                },
            )
            .map_err(|e| self.err(e))
    }

    /// One stored document.
    pub fn document(&self, kind: &str, key: &str, media_type: &str) -> Result<Option<Document>, StoreError> {
        self.conn
            .reader()
            .opt(
                "SELECT kind, key, media_type, title, as_of, body FROM documents
                 WHERE kind = ?1 AND key = ?2 AND media_type = ?3",
                vals![kind, key, media_type],
                |r| {
                    Ok(Document {
                        kind: r.string(0)?,
                        key: r.string(1)?,
                        media_type: r.string(2)?,
                        title: r.string(3)?,
                        as_of: r.string(4)?,
                        body: r.string(5)?,
                    })
                },
            )
            .map_err(|e| self.err(e))
    }
}
