//! The evidence ledger: every evidence item a report cites (snapshot entries, build
//! results, JUnit cases, PR and issue states, code lines) with its kind, locator,
//! excerpt, content hash and when it was read, so any claim can be looked up by its id
//! later. Items are content-addressed: recording the same item again keeps the first
//! reading.

use crate::db::{vals, DbError, Exec, Row};
use crate::{Store, StoreError};
use citriage_model::{Evidence, EvidenceKind};

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

type EntryRow = (String, String, String, String, String, String, String);

fn entry_row(r: &Row<'_>) -> Result<EntryRow, DbError> {
    Ok((r.string(0)?, r.string(1)?, r.string(2)?, r.string(3)?, r.string(4)?, r.string(5)?, r.string(6)?))
}

/// Inserts evidence items in the caller's transaction; items already recorded keep
/// their first reading. Returns how many were new.
pub(crate) fn insert_evidence(tx: &mut impl Exec, items: &[Evidence], read_at: &str) -> Result<usize, DbError> {
    let mut new = 0;
    for e in items {
        new += tx.exec(
            "INSERT INTO evidence (id, kind, locator, excerpt, source_sha256, as_of, read_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (id) DO NOTHING",
            vals![&e.id, kind_text(e.kind).as_str(), &e.locator, &e.excerpt, &e.source_sha256, &e.as_of, read_at],
        )? as usize;
    }
    Ok(new)
}

impl Store {
    /// Records evidence items in one transaction; items already recorded keep their
    /// first reading. Returns how many were new.
    pub fn record_evidence(&mut self, items: &[Evidence], read_at: &str) -> Result<usize, StoreError> {
        self.conn.write(&mut |tx| insert_evidence(tx, items, read_at)).map_err(|e| self.err(e))
    }

    fn to_entry(&self, t: EntryRow) -> Result<LedgerEntry, StoreError> {
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
            .reader()
            .opt(
                "SELECT id, kind, locator, excerpt, source_sha256, as_of, read_at FROM evidence WHERE id = ?1",
                vals![id],
                entry_row,
            )
            .map_err(|e| self.err(e))?;
        t.map(|t| self.to_entry(t)).transpose()
    }

    /// Ledger entries whose locator starts with `prefix`, by locator then id.
    pub fn evidence_by_locator(&self, prefix: &str) -> Result<Vec<LedgerEntry>, StoreError> {
        let rows = self
            .conn
            .reader()
            .rows(
                "SELECT id, kind, locator, excerpt, source_sha256, as_of, read_at FROM evidence
                 WHERE substr(locator, 1, length(CAST(?1 AS TEXT))) = CAST(?1 AS TEXT) ORDER BY locator, id",
                vals![prefix],
                entry_row,
            )
            .map_err(|e| self.err(e))?;
        rows.into_iter().map(|t| self.to_entry(t)).collect()
    }
}
