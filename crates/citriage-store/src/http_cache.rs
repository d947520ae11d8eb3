//! Cached HTTP answers (GitHub REST) in the store: the body, ETag, pagination link and
//! when it was last confirmed, so conditional requests can be revalidated with a 304
//! and offline runs can answer from the cache and say how old each answer is.

use crate::{Store, StoreError};
use rusqlite::{params, OptionalExtension};

/// One cached answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedHttp {
    pub status: u16,
    pub etag: Option<String>,
    pub body: Vec<u8>,
    pub next: Option<String>,
    pub fetched_at: i64,
}

impl Store {
    /// The cached answer for a URL.
    pub fn http_cache_get(&self, url: &str) -> Result<Option<CachedHttp>, StoreError> {
        self.conn
            .query_row(
                "SELECT status, etag, body, next, fetched_at FROM http_cache WHERE url = ?1",
                params![url],
                |r| {
                    Ok(CachedHttp {
                        status: r.get::<_, i64>(0)? as u16,
                        etag: r.get(1)?,
                        body: r.get(2)?,
                        next: r.get(3)?,
                        fetched_at: r.get(4)?,
                    })
                },
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Stores (or replaces) the answer for a URL.
    pub fn http_cache_put(&self, url: &str, c: &CachedHttp) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO http_cache (url, status, etag, body, next, fetched_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![url, i64::from(c.status), c.etag, c.body, c.next, c.fetched_at],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// Whether a build of a job (raw job name) is stored, and whether the job is known at all.
    pub fn build_known(&self, job: &str, build_id: &str) -> Result<(bool, bool), StoreError> {
        let build: i64 = self
            .conn
            .query_row("SELECT count(*) FROM builds WHERE job = ?1 AND build_id = ?2", params![job, build_id], |r| {
                r.get(0)
            })
            .map_err(|e| self.err(e))?;
        let job_known: i64 = self
            .conn
            .query_row("SELECT count(*) FROM builds WHERE job = ?1", params![job], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        Ok((build > 0, job_known > 0))
    }
}
