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

/// A stored failure cluster (its stable id and latest key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredCluster {
    pub stable_id: String,
    pub key: String,
    pub k8s_id: String,
    pub size: u64,
    pub first_seen: i64,
    pub last_seen: i64,
}

impl Store {
    /// The clusters of a normalization profile, by stable id.
    pub fn clusters(&self, profile: &str) -> Result<Vec<StoredCluster>, StoreError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT stable_id, key, k8s_id, size, first_seen, last_seen FROM clusters WHERE profile = ?1 ORDER BY stable_id",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map(params![profile], |r| {
                Ok(StoredCluster {
                    stable_id: r.get(0)?,
                    key: r.get(1)?,
                    k8s_id: r.get(2)?,
                    size: r.get::<_, i64>(3)? as u64,
                    first_seen: r.get(4)?,
                    last_seen: r.get(5)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    /// Records this run's clusters in one transaction: a stable id keeps its first
    /// sighting and takes the current key, size and last sighting.
    pub fn upsert_clusters(&mut self, profile: &str, rows: &[StoredCluster]) -> Result<(), StoreError> {
        let path = self.path.clone();
        let sql = |source| StoreError::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        {
            let mut st = tx
                .prepare(
                    "INSERT INTO clusters (profile, stable_id, key, k8s_id, size, first_seen, last_seen)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                     ON CONFLICT (profile, stable_id) DO UPDATE SET key = excluded.key, k8s_id = excluded.k8s_id,
                        size = excluded.size, first_seen = min(first_seen, excluded.first_seen),
                        last_seen = max(last_seen, excluded.last_seen)",
                )
                .map_err(sql)?;
            for c in rows {
                st.execute(params![profile, c.stable_id, c.key, c.k8s_id, c.size as i64, c.first_seen, c.last_seen])
                    .map_err(sql)?;
            }
        }
        tx.commit().map_err(sql)
    }
}
