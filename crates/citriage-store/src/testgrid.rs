//! TestGrid tabs in the store: each tab read (its dashboard, test group, where its
//! results come from, its metadata and what it held), written in one transaction with
//! the tab's builds, so a tab is stored whole or not at all. Each build is merged with
//! what is stored under its bucket and path by the caller's rule ([`BuildWrite`]), so
//! a build TestGrid and GCS both show is one row.

use crate::builds::{put_merging_tx, BuildWrite, StoredBuildHead};
use crate::db::{vals, Exec};
use crate::{Store, StoreError};
use citriage_model::build::BuildRecord;
use serde::Serialize;

/// A TestGrid tab as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TestgridTab {
    pub dashboard: String,
    pub tab: String,
    /// The test group behind the tab.
    pub test_group: Option<String>,
    /// Where TestGrid reads its results (`bucket/prefix`).
    pub query: Option<String>,
    /// The bucket and job its builds are stored under.
    pub bucket: String,
    pub job: String,
    /// The tab's metadata (links, alert settings, header names), as JSON.
    pub meta: String,
    pub columns: i64,
    pub rows: i64,
    /// Cells per status, as JSON (`{"FAIL": 797, …}`).
    pub status_counts: String,
    /// SHA-256 of the answer read.
    pub sha256: String,
    /// When it was read (Unix seconds).
    pub read_at: i64,
}

/// What writing a tab did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TabWritten {
    /// Builds written (inserted, replaced or merged into a stored build).
    pub written: usize,
    /// Builds already stored as the tab shows them.
    pub unchanged: usize,
}

impl Store {
    /// Writes a tab and its `count` builds in one transaction (nothing of the tab is
    /// stored if any of it fails). `build(i)` makes the `i`-th build when it is written
    /// (so a large tab is never held as builds all at once; a retried transaction asks
    /// again); each is merged with the stored row of its bucket and path by `merge`.
    pub fn put_testgrid_tab(
        &mut self,
        tab: &TestgridTab,
        count: usize,
        build: &mut dyn FnMut(usize) -> BuildRecord,
        merge: &mut dyn FnMut(&BuildRecord, Option<&StoredBuildHead>) -> BuildWrite,
    ) -> Result<TabWritten, StoreError> {
        self.ensure_string_ids()?;
        let mut ids = self.string_ids.take().unwrap_or_default();
        let mut added: Vec<String> = Vec::new();
        let result = self.conn.write(&mut |tx| {
            let mut out = TabWritten::default();
            let r = (|| {
                tx.take_turns(&format!("testgrid\n{}\n{}", tab.dashboard, tab.tab))?;
                tx.exec(
                    "INSERT INTO testgrid_tabs (dashboard, tab, test_group, query, bucket, job, meta, columns, rows,
                        status_counts, sha256, read_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
                     ON CONFLICT (dashboard, tab) DO UPDATE SET test_group = excluded.test_group,
                        query = excluded.query, bucket = excluded.bucket, job = excluded.job, meta = excluded.meta,
                        columns = excluded.columns, rows = excluded.rows, status_counts = excluded.status_counts,
                        sha256 = excluded.sha256, read_at = excluded.read_at",
                    vals![
                        &tab.dashboard,
                        &tab.tab,
                        &tab.test_group,
                        &tab.query,
                        &tab.bucket,
                        &tab.job,
                        &tab.meta,
                        tab.columns,
                        tab.rows,
                        &tab.status_counts,
                        &tab.sha256,
                        tab.read_at
                    ],
                )?;
                for i in 0..count {
                    let b = build(i);
                    match put_merging_tx(tx, &b, merge, &mut ids, &mut added)? {
                        Some(_) => out.written += 1,
                        None => out.unchanged += 1,
                    }
                }
                Ok(())
            })();
            if r.is_err() {
                for t in added.drain(..) {
                    ids.remove(&t);
                }
            }
            r.map(|()| out)
        });
        self.string_ids = Some(ids);
        result.map_err(|e| self.err(e))
    }

    /// The stored tabs, by dashboard and tab.
    pub fn testgrid_tabs(&self) -> Result<Vec<TestgridTab>, StoreError> {
        self.conn
            .reader()
            .rows(
                "SELECT dashboard, tab, test_group, query, bucket, job, meta, columns, rows, status_counts, sha256,
                    read_at FROM testgrid_tabs ORDER BY dashboard, tab",
                &[],
                |r| {
                    Ok(TestgridTab {
                        dashboard: r.string(0)?,
                        tab: r.string(1)?,
                        test_group: r.opt_string(2)?,
                        query: r.opt_string(3)?,
                        bucket: r.string(4)?,
                        job: r.string(5)?,
                        meta: r.string(6)?,
                        columns: r.i64(7)?,
                        rows: r.i64(8)?,
                        status_counts: r.string(9)?,
                        sha256: r.string(10)?,
                        read_at: r.i64(11)?,
                    })
                },
            )
            .map_err(|e| self.err(e))
    }
}
