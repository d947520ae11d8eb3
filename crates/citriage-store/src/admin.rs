//! Looking at a store as a whole, whatever its engine: its tables in dependency
//! order, row counts, size on disk, a content digest that ignores row ids and import
//! times (two stores with the same builds, snapshots, clusters and documents have the
//! same digest, on SQLite or PostgreSQL, however they were written), and copying
//! every row of one store into an empty one (`citriage store migrate`).

use crate::db::{vals, Backend, DbError, Exec, Value};
use crate::{Store, StoreError};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};

/// A table and its row count.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TableCount {
    pub table: String,
    pub rows: u64,
}

/// What `citriage store info` prints.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StoreInfo {
    pub backend: Backend,
    /// The location without a password.
    pub location: String,
    pub schema_version: i64,
    pub tables: Vec<TableCount>,
    /// Bytes on disk: SQLite pages; PostgreSQL tables with their indexes and TOAST.
    pub bytes: u64,
    /// The content digest ([`Store::content_digest`]), when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Each table's digest, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table_digests: Option<BTreeMap<String, String>>,
}

/// What a copy between stores did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CopyReport {
    pub from: String,
    pub to: String,
    /// Rows copied per table, in the order they were copied.
    pub tables: Vec<TableCount>,
}

/// The rows that describe a table's content, in a canonical order and without row
/// ids: references to builds, snapshots and interned strings are replaced by what
/// they name. Every table of the schema is listed (a test checks it).
const CANONICAL: &[(&str, &str)] = &[
    ("snapshots", "SELECT dataset, snapshot_date, source, sha256, job_count FROM snapshots ORDER BY dataset, snapshot_date, sha256"),
    (
        "snapshot_jobs",
        "SELECT s.dataset, s.snapshot_date, s.sha256, j.job, j.failing_days, j.consistency, j.flakes, j.has_test_flakes
         FROM snapshot_jobs j JOIN snapshots s ON s.id = j.snapshot_id ORDER BY s.dataset, s.snapshot_date, s.sha256, j.job",
    ),
    (
        "snapshot_test_flakes",
        "SELECT s.dataset, s.snapshot_date, s.sha256, f.job, f.test, f.count
         FROM snapshot_test_flakes f JOIN snapshots s ON s.id = f.snapshot_id
         ORDER BY s.dataset, s.snapshot_date, s.sha256, f.job, f.test",
    ),
    (
        "builds",
        "SELECT bucket, path, job, build_id, kind, pr, commit_sha, repo_commit, repo_version, repos, started, finished,
            duration, result, state, executor, origin, problems, complete, skipped_tests, failed_tests, kettle, testgrid,
            sources
         FROM builds ORDER BY bucket, path",
    ),
    ("strings", "SELECT text FROM strings ORDER BY text"),
    (
        "test_results",
        "SELECT b.bucket, b.path, t.seq, f.text, su.text, c.text, n.text, k.text, t.status, t.duration, t.attempt,
            t.informing, t.failure_text
         FROM test_results t JOIN builds b ON b.id = t.build JOIN strings f ON f.id = t.file
            JOIN strings su ON su.id = t.suite JOIN strings c ON c.id = t.classname JOIN strings n ON n.id = t.name
            LEFT JOIN strings k ON k.id = t.kettle_name
         ORDER BY b.bucket, b.path, t.seq",
    ),
    (
        "artifacts",
        "SELECT b.bucket, b.path, a.path, a.size FROM artifacts a JOIN builds b ON b.id = a.build
         ORDER BY b.bucket, b.path, a.path",
    ),
    (
        "build_excerpts",
        "SELECT b.bucket, b.path, e.seq, e.source, e.line_start, e.line_end, e.text
         FROM build_excerpts e JOIN builds b ON b.id = e.build ORDER BY b.bucket, b.path, e.seq",
    ),
    (
        "build_versions",
        "SELECT b.bucket, b.path, v.file, v.key, v.value FROM build_versions v JOIN builds b ON b.id = v.build
         ORDER BY b.bucket, b.path, v.file, v.key",
    ),
    ("http_cache", "SELECT url, status, etag, body, next, fetched_at FROM http_cache ORDER BY url"),
    (
        "clusters",
        "SELECT profile, stable_id, key, k8s_id, size, first_seen, last_seen, text, spans, owner, signatures, tests,
            jobs, run_as_of FROM clusters ORDER BY profile, stable_id",
    ),
    ("cluster_runs", "SELECT profile, as_of, window_days, failures, clusters FROM cluster_runs ORDER BY profile"),
    (
        "cluster_failure_ids",
        "SELECT f.profile, b.bucket, b.path, f.seq, f.stable_id FROM cluster_failure_ids f JOIN builds b ON b.id = f.build
         ORDER BY f.profile, b.bucket, b.path, f.seq",
    ),
    (
        "cluster_subpatterns",
        "SELECT profile, stable_id, kind, label, failures, first_seen, last_seen, job, build, test, excerpt
         FROM cluster_subpatterns ORDER BY profile, stable_id, kind, label",
    ),
    (
        "cluster_members",
        "SELECT m.profile, m.stable_id, b.bucket, b.path, m.seq FROM cluster_members m JOIN builds b ON b.id = m.build
         ORDER BY m.profile, m.stable_id, b.bucket, b.path, m.seq",
    ),
    (
        "cluster_daily",
        "SELECT profile, stable_id, day, job, test, failures FROM cluster_daily
         ORDER BY profile, stable_id, day, job, test",
    ),
    // Read times describe the reader, not the content.
    (
        "testgrid_tabs",
        "SELECT dashboard, tab, test_group, query, bucket, job, meta, columns, rows, status_counts, sha256
         FROM testgrid_tabs ORDER BY dashboard, tab",
    ),
    ("documents", "SELECT kind, key, media_type, title, as_of, body, sha256 FROM documents ORDER BY kind, key, media_type"),
    // Operational status only: which sources are configured. Times, leases and
    // counters describe the workers, not the content.
    ("ingest_sources", "SELECT source, kind FROM ingest_sources ORDER BY source"),
    (
        "records",
        "SELECT subject, kind, profile, key, title, state, since, created_at, version FROM records ORDER BY subject",
    ),
    (
        "record_links",
        "SELECT subject, reference, n, source, linked_by, linked_at, unlinked_at, unlinked_by, ref_kind, ref_state,
            merged_at, merge_commit, base_branch, read_at, note FROM record_links ORDER BY subject, reference, n",
    ),
    // `recorded_at` is the writer's clock (like the ledger's `read_at`), not content.
    (
        "record_transitions",
        "SELECT subject, seq, from_state, to_state, at, evidence, reason FROM record_transitions ORDER BY subject, seq",
    ),
    (
        "evidence",
        "SELECT id, kind, locator, excerpt, source_sha256, as_of, read_at FROM evidence ORDER BY id",
    ),
    ("alert_states", "SELECT kind, subject, state FROM alert_states ORDER BY kind, subject"),
    (
        "alerts",
        "SELECT key, kind, change, subject, owner, at, title, text, body, held, raised_at FROM alerts ORDER BY key",
    ),
    // Which messages exist and whether they went out; attempts, retries, leases and
    // errors describe the senders, not the content.
    (
        "alert_outbox",
        "SELECT message, destination, CASE WHEN state = 'sent' THEN 'sent' ELSE 'unsent' END, digest_day, created
         FROM alert_outbox ORDER BY message, destination",
    ),
    (
        "alert_outbox_items",
        "SELECT message, destination, alert FROM alert_outbox_items ORDER BY message, destination, alert",
    ),
];

/// The tables [`Store::content_digest`] reads through [`CANONICAL`].
pub fn canonical_tables() -> Vec<&'static str> {
    CANONICAL.iter().map(|(t, _)| *t).collect()
}

fn hash_value(h: &mut Sha256, v: &Value) {
    match v {
        Value::Null => h.update([0u8]),
        Value::Int(i) => {
            h.update([1u8]);
            h.update(i.to_le_bytes());
        }
        Value::Real(f) => {
            h.update([2u8]);
            h.update(f.to_bits().to_le_bytes());
        }
        Value::Text(t) => {
            h.update([3u8]);
            h.update((t.len() as u64).to_le_bytes());
            h.update(t.as_bytes());
        }
        Value::Blob(b) => {
            h.update([4u8]);
            h.update((b.len() as u64).to_le_bytes());
            h.update(b);
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Store {
    /// The store's tables (not the engine's own, not the schema version), each after
    /// the tables it references, ties by name.
    pub fn tables(&self) -> Result<Vec<String>, StoreError> {
        let mut db = self.conn.reader();
        let (names, refs) = match self.backend() {
            Backend::Sqlite => (
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
                "SELECT DISTINCT \"table\" FROM pragma_foreign_key_list(?1)",
            ),
            Backend::Postgres => (
                "SELECT tablename::text FROM pg_catalog.pg_tables
                 WHERE schemaname = current_schema() AND tablename <> 'citriage_schema' ORDER BY tablename",
                "SELECT DISTINCT r.relname::text FROM pg_catalog.pg_constraint c
                 JOIN pg_catalog.pg_class t ON t.oid = c.conrelid JOIN pg_catalog.pg_class r ON r.oid = c.confrelid
                 JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace
                 WHERE c.contype = 'f' AND n.nspname = current_schema() AND t.relname = CAST(?1 AS TEXT)",
            ),
        };
        let all: Vec<String> = db.rows(names, &[], |r| r.string(0)).map_err(|e| self.err(e))?;
        let mut deps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for t in &all {
            let d: BTreeSet<String> = db
                .rows(refs, vals![t.as_str()], |r| r.string(0))
                .map_err(|e| self.err(e))?
                .into_iter()
                .filter(|d| d != t && all.contains(d))
                .collect();
            deps.insert(t.clone(), d);
        }
        let mut out: Vec<String> = Vec::new();
        while !deps.is_empty() {
            let ready: Vec<String> =
                deps.iter().filter(|(_, d)| d.iter().all(|x| out.contains(x))).map(|(t, _)| t.clone()).collect();
            if ready.is_empty() {
                return Err(self.corrupt(format!("the tables {:?} reference each other", deps.keys())));
            }
            for t in ready {
                deps.remove(&t);
                out.push(t);
            }
        }
        Ok(out)
    }

    /// A table's columns in their declared order.
    pub fn columns(&self, table: &str) -> Result<Vec<String>, StoreError> {
        let sql = match self.backend() {
            Backend::Sqlite => "SELECT name FROM pragma_table_info(?1) ORDER BY cid",
            Backend::Postgres => {
                "SELECT column_name::text FROM information_schema.columns
                 WHERE table_schema = current_schema() AND table_name = CAST(?1 AS TEXT) ORDER BY ordinal_position"
            }
        };
        self.conn.reader().rows(sql, vals![table], |r| r.string(0)).map_err(|e| self.err(e))
    }

    /// Rows per table, in [`Store::tables`] order.
    pub fn table_counts(&self) -> Result<Vec<TableCount>, StoreError> {
        let mut out = Vec::new();
        for table in self.tables()? {
            let rows =
                self.conn.reader().int(&format!("SELECT count(*) FROM {table}"), &[]).map_err(|e| self.err(e))?;
            out.push(TableCount { table, rows: rows.max(0) as u64 });
        }
        Ok(out)
    }

    /// Bytes the store takes: SQLite's pages (the write-ahead log aside); PostgreSQL's
    /// tables with their indexes and TOAST.
    pub fn size_bytes(&self) -> Result<u64, StoreError> {
        let mut db = self.conn.reader();
        let n = match self.backend() {
            Backend::Sqlite => db
                .int("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()", &[])
                .map_err(|e| self.err(e))?,
            Backend::Postgres => db
                .int(
                    "SELECT CAST(COALESCE(sum(pg_total_relation_size(c.oid)), 0) AS BIGINT) FROM pg_catalog.pg_class c
                     JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                     WHERE n.nspname = current_schema() AND c.relkind = 'r'",
                    &[],
                )
                .map_err(|e| self.err(e))?,
        };
        Ok(n.max(0) as u64)
    }

    /// Each table's content digest (SHA-256 of its canonical rows), by table name.
    /// Row ids, interned-string ids and snapshot import times are left out, so the
    /// digests depend only on what was stored, not on the order or engine.
    pub fn table_digests(&self) -> Result<BTreeMap<String, String>, StoreError> {
        let tables = self.tables()?;
        let mut out = BTreeMap::new();
        for table in &tables {
            let sql = match CANONICAL.iter().find(|(t, _)| t == table) {
                Some((_, sql)) => sql.to_string(),
                None => {
                    let cols = self.columns(table)?.join(", ");
                    format!("SELECT {cols} FROM {table} ORDER BY {cols}")
                }
            };
            let mut h = Sha256::new();
            let mut values = Vec::new();
            self.conn
                .read(&mut |tx| {
                    tx.each(&sql, &[], &mut |r| {
                        values.clear();
                        for i in 0..r.len() {
                            values.push(r.value(i)?);
                        }
                        for v in &values {
                            hash_value(&mut h, v);
                        }
                        h.update([0xffu8]);
                        Ok(())
                    })
                })
                .map_err(|e| self.err(e))?;
            out.insert(table.clone(), hex(&h.finalize()));
        }
        Ok(out)
    }

    /// One digest of the whole content (see [`Store::table_digests`]).
    pub fn content_digest(&self) -> Result<String, StoreError> {
        let mut h = Sha256::new();
        for (t, d) in self.table_digests()? {
            h.update(t.as_bytes());
            h.update([0u8]);
            h.update(d.as_bytes());
        }
        Ok(hex(&h.finalize()))
    }

    /// What `citriage store info` shows; the digests only when asked (they read everything).
    pub fn info(&self, digest: bool) -> Result<StoreInfo, StoreError> {
        let table_digests = if digest { Some(self.table_digests()?) } else { None };
        let digest = match &table_digests {
            Some(_) => Some(self.content_digest()?),
            None => None,
        };
        Ok(StoreInfo {
            backend: self.backend(),
            location: self.path.clone(),
            schema_version: self.schema_version()?,
            tables: self.table_counts()?,
            bytes: self.size_bytes()?,
            digest,
            table_digests,
        })
    }

    /// Copies every row of this store into `target`, which must be empty and have
    /// the same tables and columns (both are at [`crate::SCHEMA_VERSION`] once open),
    /// in one transaction of the target: a failed copy leaves it empty. Row ids are
    /// kept; on PostgreSQL the id sequences are moved past them and the tables
    /// analyzed. `progress` hears each table's name and rows as it is copied.
    pub fn copy_into(&self, target: &mut Store, progress: &mut dyn FnMut(&str, u64)) -> Result<CopyReport, StoreError> {
        let refuse = |reason: String| StoreError::Refused { path: target.path.clone(), reason };
        let tables = self.tables()?;
        let mut target_tables = target.tables()?;
        let mut sorted = tables.clone();
        sorted.sort();
        target_tables.sort();
        if sorted != target_tables {
            return Err(refuse(format!("its tables {target_tables:?} differ from the source's {sorted:?}")));
        }
        let mut columns = Vec::new();
        for t in &tables {
            let c = self.columns(t)?;
            let mut mine = c.clone();
            let mut theirs = target.columns(t)?;
            mine.sort();
            theirs.sort();
            if mine != theirs {
                return Err(refuse(format!("table {t} has the columns {theirs:?}, the source {mine:?}")));
            }
            columns.push(c);
        }
        if let Some(c) = target.table_counts()?.into_iter().find(|c| c.rows > 0) {
            return Err(refuse(format!("it is not empty ({} rows in {}); copy into a new store", c.rows, c.table)));
        }
        let source = &self.conn;
        let source_path = self.path.clone();
        let mut copied = Vec::new();
        let result = target.conn.write(&mut |tx| {
            copied.clear();
            for (t, cols) in tables.iter().zip(&columns) {
                let list = cols.join(", ");
                let names: Vec<&str> = cols.iter().map(String::as_str).collect();
                let sql = format!("SELECT {list} FROM {t}");
                let mut n = 0u64;
                tx.bulk(t, &names, &mut |b| {
                    let mut row = Vec::with_capacity(names.len());
                    source
                        .reader()
                        .each(&sql, &[], &mut |r| {
                            row.clear();
                            for i in 0..r.len() {
                                row.push(r.value(i)?);
                            }
                            let vals: Vec<_> = row.iter().map(Value::as_val).collect();
                            b.row(&vals)?;
                            n += 1;
                            if n.is_multiple_of(100_000) {
                                progress(t, n);
                            }
                            Ok(())
                        })
                        .map_err(|e| DbError::Msg(format!("reading {t} from {source_path}: {e}")))?;
                    Ok(())
                })?;
                progress(t, n);
                copied.push(TableCount { table: t.clone(), rows: n });
            }
            if tx.backend() == Backend::Postgres {
                let idents = tx.rows(
                    "SELECT table_name::text, column_name::text FROM information_schema.columns
                     WHERE table_schema = current_schema() AND is_identity = 'YES' ORDER BY table_name",
                    &[],
                    |r| Ok((r.string(0)?, r.string(1)?)),
                )?;
                for (t, c) in idents {
                    tx.exec(
                        &format!(
                            "SELECT setval(pg_get_serial_sequence('{t}', '{c}'), (SELECT COALESCE(max({c}), 0) + 1 FROM {t}), false)"
                        ),
                        &[],
                    )?;
                }
            }
            Ok(())
        });
        result.map_err(|e| target.err(e))?;
        if target.backend() == Backend::Postgres {
            target.conn.reader().batch("ANALYZE").map_err(|e| target.err(e))?;
        }
        Ok(CopyReport { from: self.path.clone(), to: target.path.clone(), tables: copied })
    }
}
