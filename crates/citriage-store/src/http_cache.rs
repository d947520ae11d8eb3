//! Cached HTTP answers (GitHub REST) in the store: the body, ETag, pagination link and
//! when it was last confirmed, so conditional requests can be revalidated with a 304
//! and offline runs can answer from the cache and say how old each answer is.

use crate::db::{vals, Exec, Val};
use crate::{Store, StoreError};

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
            .reader()
            .opt("SELECT status, etag, body, next, fetched_at FROM http_cache WHERE url = ?1", vals![url], |r| {
                Ok(CachedHttp {
                    status: r.i64(0)? as u16,
                    etag: r.opt_string(1)?,
                    body: r.blob(2)?,
                    next: r.opt_string(3)?,
                    fetched_at: r.i64(4)?,
                })
            })
            .map_err(|e| self.err(e))
    }

    /// The newest cached answer whose URL ends with `suffix` (a path under some API
    /// base, starting with `/`), with its URL: an offline reader's answer fetched
    /// under another base. Ties go to the first URL in order.
    pub fn http_cache_get_by_suffix(&self, suffix: &str) -> Result<Option<(String, CachedHttp)>, StoreError> {
        if !suffix.starts_with('/') {
            return Ok(None);
        }
        self.conn
            .reader()
            .opt(
                "SELECT url, status, etag, body, next, fetched_at FROM http_cache
                 WHERE length(url) > length(CAST(?1 AS TEXT))
                   AND substr(url, length(url) - length(CAST(?1 AS TEXT)) + 1) = CAST(?1 AS TEXT)
                 ORDER BY fetched_at DESC, url",
                vals![suffix],
                |r| {
                    Ok((
                        r.string(0)?,
                        CachedHttp {
                            status: r.i64(1)? as u16,
                            etag: r.opt_string(2)?,
                            body: r.blob(3)?,
                            next: r.opt_string(4)?,
                            fetched_at: r.i64(5)?,
                        },
                    ))
                },
            )
            .map_err(|e| self.err(e))
    }

    /// Stores (or replaces) the answer for a URL.
    pub fn http_cache_put(&self, url: &str, c: &CachedHttp) -> Result<(), StoreError> {
        self.conn
            .write(&mut |tx| {
                tx.exec(
                    "INSERT INTO http_cache (url, status, etag, body, next, fetched_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT (url) DO UPDATE SET status = excluded.status, etag = excluded.etag,
                        body = excluded.body, next = excluded.next, fetched_at = excluded.fetched_at",
                    vals![url, i64::from(c.status), &c.etag, Val::Blob(&c.body), &c.next, c.fetched_at],
                )
            })
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// The URLs of the cached answers that start with `prefix`, sorted.
    pub fn http_cache_urls(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        self.conn
            .reader()
            .rows(
                "SELECT url FROM http_cache WHERE substr(url, 1, ?2) = ?1 ORDER BY url",
                vals![prefix, prefix.chars().count() as i64],
                |r| r.string(0),
            )
            .map_err(|e| self.err(e))
    }

    /// Whether a build of a job (raw job name) is stored, and whether the job is known at all.
    pub fn build_known(&self, job: &str, build_id: &str) -> Result<(bool, bool), StoreError> {
        let mut db = self.conn.reader();
        let build = db
            .int("SELECT count(*) FROM builds WHERE job = ?1 AND build_id = ?2", vals![job, build_id])
            .map_err(|e| self.err(e))?;
        let job_known = db.int("SELECT count(*) FROM builds WHERE job = ?1", vals![job]).map_err(|e| self.err(e))?;
        Ok((build > 0, job_known > 0))
    }
}
