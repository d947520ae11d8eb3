//! What each build ran with (`build_versions`): written with the build, replaced with
//! it, read for a few builds at a time (the two ends of a regression window and the
//! builds before them).

use std::collections::BTreeMap;

use crate::db::{vals, DbError, Exec, Tx};
use crate::{Store, StoreError};

pub use citriage_model::build::BuildVersion;

/// Writes a build's versions (one row per file and key: a repeated key keeps its first value).
pub(crate) fn write(tx: &mut Tx<'_>, build: i64, versions: &[BuildVersion]) -> Result<(), DbError> {
    if versions.is_empty() {
        return Ok(());
    }
    let mut rows: BTreeMap<(&str, &str), &str> = BTreeMap::new();
    for v in versions {
        rows.entry((v.file.as_str(), v.key.as_str())).or_insert(v.value.as_str());
    }
    tx.bulk("build_versions", &["build", "file", "key", "value"], &mut |bk| {
        for ((file, key), value) in &rows {
            bk.row(vals![build, *file, *key, *value])?;
        }
        Ok(())
    })?;
    Ok(())
}

impl Store {
    /// The versions of these builds (row ids), by build, each sorted by file and key;
    /// a build without any is left out.
    pub fn build_versions(&self, ids: &[i64]) -> Result<BTreeMap<i64, Vec<BuildVersion>>, StoreError> {
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        let mut out = BTreeMap::new();
        let mut reader = self.conn.reader();
        for id in ids {
            let rows = reader
                .rows(
                    "SELECT file, key, value FROM build_versions WHERE build = ?1 ORDER BY file, key",
                    vals![id],
                    |r| Ok(BuildVersion { file: r.string(0)?, key: r.string(1)?, value: r.string(2)? }),
                )
                .map_err(|e| self.err(e))?;
            if !rows.is_empty() {
                out.insert(id, rows);
            }
        }
        Ok(out)
    }
}
