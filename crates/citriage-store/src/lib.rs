//! The embedded SQLite store: one file holding every imported snapshot (and, as the
//! pipeline grows, builds and evidence). The schema is versioned with ordered
//! migrations; every import is one transaction, so a failed import leaves the store
//! exactly as it was.

use citriage_model::{Dataset, Day, FlakeStats, JobEntry, JobStats, Snapshot, SnapshotMeta};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod builds;
mod clusters;
mod documents;
mod http_cache;
mod ledger;
pub use builds::{BuildRecord, IndexedBuild, LogExcerpt, StoredTest};
pub use clusters::{
    ClusterDay, ClusterFailure, ClusterMember, ClusterRun, FirstId, NamedFailure, StoredCluster, StoredSubPattern,
};
pub use documents::{Document, DocumentHeader};
pub use http_cache::CachedHttp;
pub use ledger::LedgerEntry;

/// Store errors; the message names the database file.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("store {path}: {source}")]
    Sqlite { path: String, source: rusqlite::Error },
    #[error("store {path}: cannot create its folder: {source}")]
    Dir { path: String, source: std::io::Error },
    #[error(
        "store {path}: schema version {found} is newer than this citriage understands ({known}); upgrade citriage"
    )]
    TooNew { path: String, found: i64, known: i64 },
    #[error("store {path}: corrupt row: {detail}")]
    Corrupt { path: String, detail: String },
}

/// Ordered schema migrations; entry `i` moves the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: dashboard snapshots.
    "CREATE TABLE snapshots (
        id INTEGER PRIMARY KEY,
        dataset TEXT NOT NULL CHECK (dataset IN ('failures', 'flakes')),
        snapshot_date TEXT NOT NULL,
        source TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        job_count INTEGER NOT NULL,
        imported_at TEXT NOT NULL,
        UNIQUE (dataset, snapshot_date, sha256)
    );
    CREATE INDEX snapshots_by_dataset_date ON snapshots (dataset, snapshot_date, id);
    CREATE TABLE snapshot_jobs (
        snapshot_id INTEGER NOT NULL REFERENCES snapshots (id) ON DELETE CASCADE,
        job TEXT NOT NULL,
        failing_days INTEGER,
        consistency REAL,
        flakes INTEGER,
        has_test_flakes INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (snapshot_id, job)
    ) WITHOUT ROWID;
    CREATE TABLE snapshot_test_flakes (
        snapshot_id INTEGER NOT NULL,
        job TEXT NOT NULL,
        test TEXT NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (snapshot_id, job, test),
        FOREIGN KEY (snapshot_id, job) REFERENCES snapshot_jobs (snapshot_id, job) ON DELETE CASCADE
    ) WITHOUT ROWID;",
    // 2: Prow builds, their test results and artifact index.
    "CREATE TABLE builds (
        id INTEGER PRIMARY KEY,
        bucket TEXT NOT NULL,
        path TEXT NOT NULL,
        job TEXT NOT NULL,
        build_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        pr INTEGER,
        commit_sha TEXT,
        repo_commit TEXT,
        repo_version TEXT,
        repos TEXT,
        started INTEGER,
        finished INTEGER,
        duration INTEGER,
        result TEXT,
        state TEXT,
        executor TEXT,
        origin TEXT NOT NULL,
        problems TEXT NOT NULL DEFAULT '[]',
        complete INTEGER NOT NULL,
        skipped_tests INTEGER NOT NULL DEFAULT 0,
        UNIQUE (bucket, path)
    );
    CREATE INDEX builds_by_job ON builds (job, started);
    CREATE TABLE strings (
        id INTEGER PRIMARY KEY,
        text TEXT NOT NULL UNIQUE
    );
    CREATE TABLE test_results (
        build INTEGER NOT NULL REFERENCES builds (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        file INTEGER NOT NULL,
        suite INTEGER NOT NULL,
        classname INTEGER NOT NULL,
        name INTEGER NOT NULL,
        kettle_name INTEGER,
        status INTEGER NOT NULL,
        duration REAL,
        attempt INTEGER NOT NULL,
        informing INTEGER NOT NULL,
        failure_text TEXT,
        PRIMARY KEY (build, seq)
    ) WITHOUT ROWID;
    CREATE TABLE artifacts (
        build INTEGER NOT NULL REFERENCES builds (id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        size INTEGER,
        PRIMARY KEY (build, path)
    ) WITHOUT ROWID;",
    // 3: HTTP answers (GitHub REST) kept for conditional requests and offline use.
    "CREATE TABLE http_cache (
        url TEXT PRIMARY KEY,
        status INTEGER NOT NULL,
        etag TEXT,
        body BLOB NOT NULL,
        next TEXT,
        fetched_at INTEGER NOT NULL
    ) WITHOUT ROWID;",
    // 4: failure clusters' stable ids, carried from run to run.
    "CREATE TABLE clusters (
        profile TEXT NOT NULL,
        stable_id TEXT NOT NULL,
        key TEXT NOT NULL,
        k8s_id TEXT NOT NULL,
        size INTEGER NOT NULL,
        first_seen INTEGER NOT NULL,
        last_seen INTEGER NOT NULL,
        PRIMARY KEY (profile, stable_id)
    ) WITHOUT ROWID;",
    // 5: the evidence ledger: every evidence item a report cited, with when it was read.
    "CREATE TABLE evidence (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        locator TEXT NOT NULL,
        excerpt TEXT NOT NULL,
        source_sha256 TEXT NOT NULL,
        as_of TEXT NOT NULL,
        read_at TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX evidence_by_locator ON evidence (locator);",
    // 6: what the dashboard reads without rescanning everything: each build's failed-test
    // count, log excerpts of failed builds, cluster membership and daily counts of the
    // latest clustering run per profile, and stored documents (reports, payload
    // analyses, verifier results).
    "ALTER TABLE builds ADD COLUMN failed_tests INTEGER NOT NULL DEFAULT 0;
    UPDATE builds SET failed_tests =
        (SELECT count(*) FROM test_results t WHERE t.build = builds.id AND t.status IN (1, 2));
    CREATE TABLE build_excerpts (
        build INTEGER NOT NULL REFERENCES builds (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        source TEXT NOT NULL,
        line_start INTEGER NOT NULL,
        line_end INTEGER NOT NULL,
        text TEXT NOT NULL,
        PRIMARY KEY (build, seq)
    ) WITHOUT ROWID;
    ALTER TABLE clusters ADD COLUMN text TEXT NOT NULL DEFAULT '';
    ALTER TABLE clusters ADD COLUMN spans TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE clusters ADD COLUMN owner TEXT NOT NULL DEFAULT '';
    ALTER TABLE clusters ADD COLUMN signatures TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE clusters ADD COLUMN tests INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE clusters ADD COLUMN jobs INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE clusters ADD COLUMN run_as_of INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE cluster_runs (
        profile TEXT PRIMARY KEY,
        as_of INTEGER NOT NULL,
        window_days INTEGER NOT NULL,
        failures INTEGER NOT NULL,
        clusters INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE cluster_members (
        profile TEXT NOT NULL,
        stable_id TEXT NOT NULL,
        build INTEGER NOT NULL REFERENCES builds (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        PRIMARY KEY (profile, stable_id, build, seq)
    ) WITHOUT ROWID;
    CREATE INDEX cluster_members_by_build ON cluster_members (build);
    CREATE TABLE cluster_daily (
        profile TEXT NOT NULL,
        stable_id TEXT NOT NULL,
        day INTEGER NOT NULL,
        job TEXT NOT NULL,
        test TEXT NOT NULL,
        failures INTEGER NOT NULL,
        PRIMARY KEY (profile, stable_id, day, job, test)
    ) WITHOUT ROWID;
    CREATE TABLE documents (
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        media_type TEXT NOT NULL,
        title TEXT NOT NULL,
        as_of TEXT NOT NULL,
        body TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        PRIMARY KEY (kind, key, media_type)
    ) WITHOUT ROWID;",
    // 7: which stable id each clustered failure was first given (ids follow their failures
    // from run to run, whatever the window), and the sub-patterns of the latest run.
    "CREATE TABLE cluster_failure_ids (
        profile TEXT NOT NULL,
        build INTEGER NOT NULL REFERENCES builds (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        stable_id TEXT NOT NULL,
        PRIMARY KEY (profile, build, seq)
    ) WITHOUT ROWID;
    INSERT OR IGNORE INTO cluster_failure_ids (profile, build, seq, stable_id)
        SELECT profile, build, seq, stable_id FROM cluster_members;
    CREATE TABLE cluster_subpatterns (
        profile TEXT NOT NULL,
        stable_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        label TEXT NOT NULL,
        failures INTEGER NOT NULL,
        first_seen INTEGER NOT NULL,
        last_seen INTEGER NOT NULL,
        job TEXT NOT NULL,
        build TEXT NOT NULL,
        test TEXT NOT NULL,
        excerpt TEXT NOT NULL,
        PRIMARY KEY (profile, stable_id, kind, label)
    ) WITHOUT ROWID;",
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// A stored snapshot's header.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StoredSnapshot {
    pub id: i64,
    pub dataset: Dataset,
    pub date: Day,
    pub source: String,
    pub sha256: String,
    pub job_count: usize,
    pub imported_at: String,
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ImportOutcome {
    pub snapshot: StoredSnapshot,
    /// False when an identical snapshot (same dataset, date and content) was already stored.
    pub inserted: bool,
}

/// An open store.
pub struct Store {
    conn: Connection,
    path: String,
    /// Interned strings (test names, files) by text, loaded on first use.
    string_ids: Option<std::collections::HashMap<String, i64>>,
    /// Interned strings by id, loaded on first read.
    string_texts: Option<std::collections::HashMap<i64, std::sync::Arc<str>>>,
}

/// The default store file: `$CITRIAGE_DB`, else `$XDG_DATA_HOME/citriage/citriage.db`,
/// else `$HOME/.local/share/citriage/citriage.db`, else `./citriage.db`.
pub fn default_path() -> PathBuf {
    if let Some(p) = std::env::var_os("CITRIAGE_DB").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    if let Some(x) = std::env::var_os("XDG_DATA_HOME").filter(|p| !p.is_empty()) {
        return PathBuf::from(x).join("citriage").join("citriage.db");
    }
    if let Some(h) = std::env::var_os("HOME").filter(|p| !p.is_empty()) {
        return PathBuf::from(h).join(".local/share/citriage/citriage.db");
    }
    PathBuf::from("citriage.db")
}

impl Store {
    /// Opens (creating if needed) a store file and brings its schema up to date.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let p = path.display().to_string();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Dir { path: p.clone(), source })?;
        }
        let conn = Connection::open(path).map_err(|source| StoreError::Sqlite { path: p.clone(), source })?;
        Store::init(conn, p)
    }

    /// An in-memory store (tests, benchmarks).
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let p = ":memory:".to_string();
        let conn = Connection::open_in_memory().map_err(|source| StoreError::Sqlite { path: p.clone(), source })?;
        Store::init(conn, p)
    }

    fn init(mut conn: Connection, path: String) -> Result<Store, StoreError> {
        let sql = |source| StoreError::Sqlite { path: path.clone(), source };
        conn.busy_timeout(std::time::Duration::from_secs(10)).map_err(sql)?;
        conn.execute_batch(
            "PRAGMA foreign_keys = ON; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
             PRAGMA cache_size = -131072; PRAGMA mmap_size = 1073741824; PRAGMA temp_store = MEMORY;",
        )
        .map_err(sql)?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(sql)?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::TooNew { path, found: version, known: SCHEMA_VERSION });
        }
        for (i, m) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
            tx.execute_batch(m).map_err(sql)?;
            tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1)).map_err(sql)?;
            tx.commit().map_err(sql)?;
        }
        Ok(Store { conn, path, string_ids: None, string_texts: None })
    }

    /// The file this store lives in.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        self.conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(|e| self.err(e))
    }

    fn err(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite { path: self.path.clone(), source }
    }

    /// Imports a snapshot in one transaction. Importing the same content for the same
    /// dataset and date again is a no-op that returns the stored copy.
    pub fn import_snapshot(&mut self, snap: &Snapshot, imported_at: &str) -> Result<ImportOutcome, StoreError> {
        let path = self.path.clone();
        let sql = |source| StoreError::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
        let existing: Option<i64> = tx
            .query_row(
                "SELECT id FROM snapshots WHERE dataset = ?1 AND snapshot_date = ?2 AND sha256 = ?3",
                params![snap.meta.dataset.as_str(), snap.meta.date.to_string(), snap.meta.sha256],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql)?;
        if let Some(id) = existing {
            tx.commit().map_err(sql)?;
            let s = self.snapshot_header(id)?;
            return Ok(ImportOutcome { snapshot: s, inserted: false });
        }
        tx.execute(
            "INSERT INTO snapshots (dataset, snapshot_date, source, sha256, job_count, imported_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                snap.meta.dataset.as_str(),
                snap.meta.date.to_string(),
                snap.meta.source,
                snap.meta.sha256,
                snap.jobs.len() as i64,
                imported_at
            ],
        )
        .map_err(sql)?;
        let id = tx.last_insert_rowid();
        {
            let mut job_stmt = tx
                .prepare(
                    "INSERT INTO snapshot_jobs (snapshot_id, job, failing_days, consistency, flakes, has_test_flakes)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(sql)?;
            let mut test_stmt = tx
                .prepare("INSERT INTO snapshot_test_flakes (snapshot_id, job, test, count) VALUES (?1, ?2, ?3, ?4)")
                .map_err(sql)?;
            for e in &snap.jobs {
                match &e.stats {
                    JobStats::Failures { failing_days } => {
                        job_stmt
                            .execute(params![id, e.job, *failing_days as i64, None::<f64>, None::<i64>, 0])
                            .map_err(sql)?;
                    }
                    JobStats::Flakes(f) => {
                        job_stmt
                            .execute(params![
                                id,
                                e.job,
                                None::<i64>,
                                f.consistency,
                                f.flakes as i64,
                                i64::from(f.test_flakes.is_some())
                            ])
                            .map_err(sql)?;
                        for (t, n) in f.test_flakes.iter().flatten() {
                            test_stmt.execute(params![id, e.job, t, *n as i64]).map_err(sql)?;
                        }
                    }
                }
            }
        }
        tx.commit().map_err(sql)?;
        Ok(ImportOutcome { snapshot: self.snapshot_header(id)?, inserted: true })
    }

    fn snapshot_header(&self, id: i64) -> Result<StoredSnapshot, StoreError> {
        let row = self
            .conn
            .query_row(
                "SELECT id, dataset, snapshot_date, source, sha256, job_count, imported_at FROM snapshots WHERE id = ?1",
                params![id],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, i64>(5)?,
                        r.get::<_, String>(6)?,
                    ))
                },
            )
            .map_err(|e| self.err(e))?;
        self.header_from_row(row)
    }

    #[allow(clippy::type_complexity)]
    fn header_from_row(
        &self,
        row: (i64, String, String, String, String, i64, String),
    ) -> Result<StoredSnapshot, StoreError> {
        let corrupt = |detail: String| StoreError::Corrupt { path: self.path.clone(), detail };
        let dataset: Dataset = row.1.parse().map_err(corrupt)?;
        let date = Day::parse(&row.2).ok_or_else(|| corrupt(format!("snapshot {} has date {:?}", row.0, row.2)))?;
        Ok(StoredSnapshot {
            id: row.0,
            dataset,
            date,
            source: row.3,
            sha256: row.4,
            job_count: row.5.max(0) as usize,
            imported_at: row.6,
        })
    }

    /// Every stored snapshot of a dataset (or all), oldest first by date, then import order.
    pub fn list_snapshots(&self, dataset: Option<Dataset>) -> Result<Vec<StoredSnapshot>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, dataset, snapshot_date, source, sha256, job_count, imported_at FROM snapshots
                 WHERE ?1 IS NULL OR dataset = ?1 ORDER BY dataset, snapshot_date, id",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![dataset.map(|d| d.as_str())], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?))
            })
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        rows.into_iter().map(|r| self.header_from_row(r)).collect()
    }

    /// The newest snapshot of a dataset (latest date; for one date, the last imported).
    pub fn latest(&self, dataset: Dataset) -> Result<Option<StoredSnapshot>, StoreError> {
        Ok(self.list_snapshots(Some(dataset))?.pop())
    }

    /// The newest snapshot of the dataset dated strictly before `date`.
    pub fn previous(&self, dataset: Dataset, date: Day) -> Result<Option<StoredSnapshot>, StoreError> {
        Ok(self.list_snapshots(Some(dataset))?.into_iter().rev().find(|s| s.date < date))
    }

    /// Loads a stored snapshot in full.
    pub fn load_snapshot(&self, id: i64) -> Result<Snapshot, StoreError> {
        let h = self.snapshot_header(id)?;
        let mut tests: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
        {
            let mut stmt = self
                .conn
                .prepare("SELECT job, test, count FROM snapshot_test_flakes WHERE snapshot_id = ?1")
                .map_err(|e| self.err(e))?;
            let rows = stmt
                .query_map(params![id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?)))
                .map_err(|e| self.err(e))?;
            for r in rows {
                let (job, test, n) = r.map_err(|e| self.err(e))?;
                tests.entry(job).or_default().insert(test, n.max(0) as u64);
            }
        }
        let mut stmt = self
            .conn
            .prepare(
                "SELECT job, failing_days, consistency, flakes, has_test_flakes FROM snapshot_jobs
                 WHERE snapshot_id = ?1 ORDER BY job",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<i64>>(1)?,
                    r.get::<_, Option<f64>>(2)?,
                    r.get::<_, Option<i64>>(3)?,
                    r.get::<_, i64>(4)?,
                ))
            })
            .map_err(|e| self.err(e))?;
        let mut jobs = Vec::new();
        for r in rows {
            let (job, days, consistency, flakes, has_tests) = r.map_err(|e| self.err(e))?;
            let stats = match h.dataset {
                Dataset::Failures => JobStats::Failures { failing_days: days.unwrap_or(0).max(0) as u32 },
                Dataset::Flakes => {
                    let t = tests.remove(&job);
                    JobStats::Flakes(FlakeStats {
                        consistency: consistency.unwrap_or(1.0),
                        flakes: flakes.unwrap_or(0).max(0) as u64,
                        test_flakes: if has_tests != 0 { Some(t.unwrap_or_default()) } else { None },
                    })
                }
            };
            jobs.push(JobEntry { job, stats });
        }
        Ok(Snapshot::new(SnapshotMeta { dataset: h.dataset, date: h.date, source: h.source, sha256: h.sha256 }, jobs))
    }

    /// Job names of a stored snapshot.
    pub fn snapshot_job_names(&self, id: i64) -> Result<BTreeSet<String>, StoreError> {
        let mut stmt =
            self.conn.prepare("SELECT job FROM snapshot_jobs WHERE snapshot_id = ?1").map_err(|e| self.err(e))?;
        let rows = stmt.query_map(params![id], |r| r.get::<_, String>(0)).map_err(|e| self.err(e))?;
        rows.collect::<Result<BTreeSet<_>, _>>().map_err(|e| self.err(e))
    }
}
