//! The evidence ledger: every evidence item a report cites (snapshot entries, build
//! results, JUnit cases, PR and issue states, code lines) with its kind, locator,
//! excerpt, content hash and when it was read, so any claim can be looked up by its id
//! later. Items are content-addressed: recording the same item again keeps the first
//! reading.

use crate::{Store, StoreError};
use citriage_model::{Evidence, EvidenceKind};
use rusqlite::{params, OptionalExtension};

fn kind_text(k: EvidenceKind) -> String {
    serde_json::to_value(k).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()
}

fn kind_from(s: &str) -> Option<EvidenceKind> {
    serde_json::from_value(serde_json::Value::String(s.to_string())).ok()
}

/// A ledger entry: the item and when it was first read (RFC 3339).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LedgerEntry {
    #[serde(flatten)]
    pub evidence: Evidence,
    pub read_at: String,
}

impl Store {
    /// Records evidence items in one transaction; items already recorded keep their
    /// first reading. Returns how many were new.
    pub fn record_evidence(&mut self, items: &[Evidence], read_at: &str) -> Result<usize, StoreError> {
        let path = self.path.clone();
        let sql = |source| StoreError::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        let mut new = 0;
        {
            let mut st = tx
                .prepare(
                    "INSERT OR IGNORE INTO evidence (id, kind, locator, excerpt, source_sha256, as_of, read_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )
                .map_err(sql)?;
            for e in items {
                new += st
                    .execute(params![e.id, kind_text(e.kind), e.locator, e.excerpt, e.source_sha256, e.as_of, read_at])
                    .map_err(sql)?;
            }
        }
        tx.commit().map_err(sql)?;
        Ok(new)
    }

    fn entry_from_row(
        r: &rusqlite::Row<'_>,
    ) -> rusqlite::Result<(String, String, String, String, String, String, String)> {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?))
    }

    fn to_entry(&self, t: (String, String, String, String, String, String, String)) -> Result<LedgerEntry, StoreError> {
        let kind = kind_from(&t.1).ok_or_else(|| StoreError::Corrupt {
            path: self.path.clone(),
            detail: format!("evidence {} has kind {:?}", t.0, t.1),
        })?;
        Ok(LedgerEntry {
            evidence: Evidence { id: t.0, kind, locator: t.2, excerpt: t.3, source_sha256: t.4, as_of: t.5 },
            read_at: t.6,
        })
    }

    /// One ledger entry by id.
    pub fn evidence(&self, id: &str) -> Result<Option<LedgerEntry>, StoreError> {
        let t = self
            .conn
            .query_row(
                "SELECT id, kind, locator, excerpt, source_sha256, as_of, read_at FROM evidence WHERE id = ?1",
                params![id],
                Store::entry_from_row,
            )
            .optional()
            .map_err(|e| self.err(e))?;
        t.map(|t| self.to_entry(t)).transpose()
    }

    /// Ledger entries whose locator starts with `prefix`, by locator then id.
    pub fn evidence_by_locator(&self, prefix: &str) -> Result<Vec<LedgerEntry>, StoreError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT id, kind, locator, excerpt, source_sha256, as_of, read_at FROM evidence
                 WHERE substr(locator, 1, length(?1)) = ?1 ORDER BY locator, id",
            )
            .map_err(|e| self.err(e))?;
        let rows = st.query_map(params![prefix], Store::entry_from_row).map_err(|e| self.err(e))?;
        let rows: Vec<_> = rows.collect::<Result<_, _>>().map_err(|e| self.err(e))?;
        rows.into_iter().map(|t| self.to_entry(t)).collect()
    }
}
