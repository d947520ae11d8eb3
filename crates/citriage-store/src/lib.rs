//! The store: every imported snapshot, Prow build, clustering run, document and
//! evidence item, on one of two engines behind one interface. SQLite (one file, no
//! server) is the embedded default; PostgreSQL (`postgres://…`, cargo feature
//! `postgres`) serves a team: many writers, a pooled connection per thread, bulk rows
//! with `COPY`. Both run the same versioned migrations ([`SCHEMA_VERSION`]) and give
//! the same guarantees: every import or build is one transaction (a failed or killed
//! write leaves the store as it was), writes are idempotent upserts, and concurrent
//! writers wait for each other instead of failing.

use citriage_model::{Dataset, Day, FlakeStats, JobEntry, JobStats, Snapshot, SnapshotMeta};
use db::{vals, Conn, DbError, Exec, Val};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

mod admin;
mod alerts;
mod build_versions;
mod builds;
mod clusters;
mod db;
mod documents;
mod http_cache;
mod ingest_status;
mod ledger;
#[cfg(feature = "postgres")]
mod pg;
#[cfg(feature = "postgres")]
pub mod pg_cluster;
mod records;
mod schema;
mod string_texts;
mod testgrid;
mod value;
mod window;
pub use admin::{canonical_tables, CopyReport, StoreInfo, TableCount};
pub use alerts::{
    AlertStates, AlertTurn, ClaimedMessage, FailedAttempt, NewAlert, NewDelivery, OutboxRow, OutboxState, StoredAlert,
    TurnWritten,
};
pub use build_versions::BuildVersion;
pub use builds::{BuildRecord, BuildWrite, IndexedBuild, LogExcerpt, StoredBuildHead, StoredTest, TestgridFacts};
pub use clusters::{
    ClusterDay, ClusterFailure, ClusterMember, ClusterRun, FirstId, MemberAt, NamedFailure, StoredCluster,
    StoredSubPattern,
};
pub use db::Backend;
pub use documents::{Document, DocumentHeader};
pub use http_cache::CachedHttp;
pub use ingest_status::{Attempt, SourceStatus};
pub use ledger::LedgerEntry;
pub use records::{
    LinkSource, LinkWrite, NewLink, NewTransition, PatternRun, RecordWrite, RefFacts, StoredLink, StoredRecord,
    StoredTransition, Subject, RECORD_STATES,
};
pub use schema::SCHEMA_VERSION;
pub use testgrid::{TabWritten, TestgridTab};
pub use window::{Window, WindowBuild, WindowFailure};

/// Store errors; the message names the store (a PostgreSQL URL without its password).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("store {path}: {source}")]
    Sqlite { path: String, source: rusqlite::Error },
    #[error("store {path}: {message}")]
    Postgres { path: String, message: String },
    #[error("store {path}: {message}")]
    Database { path: String, message: String },
    #[error("store {path}: cannot create its folder: {source}")]
    Dir { path: String, source: std::io::Error },
    #[error(
        "store {path}: schema version {found} is newer than this citriage understands ({known}); upgrade citriage"
    )]
    TooNew { path: String, found: i64, known: i64 },
    #[error("store {path}: corrupt row: {detail}")]
    Corrupt { path: String, detail: String },
    /// The location cannot be used as given (a malformed URL, a backend this build
    /// lacks, a copy into a store that is not empty).
    #[error("store {path}: {reason}")]
    Refused { path: String, reason: String },
}

impl StoreError {
    /// True when the location or request was at fault rather than the engine.
    pub fn is_bad_input(&self) -> bool {
        matches!(self, StoreError::Refused { .. } | StoreError::TooNew { .. })
    }

    fn from_db(path: &str, e: DbError) -> StoreError {
        let path = path.to_string();
        match e {
            DbError::Sqlite(source) => StoreError::Sqlite { path, source },
            #[cfg(feature = "postgres")]
            e @ DbError::Pg(_) => StoreError::Postgres { path, message: e.to_string() },
            DbError::Msg(message) => StoreError::Database { path, message },
        }
    }
}

/// Where a store lives: a SQLite file, a PostgreSQL database, or a private in-memory
/// SQLite database. Printed without a password.
#[derive(Clone, PartialEq, Eq)]
pub enum Location {
    /// A SQLite file (created with its folder when missing).
    Sqlite(PathBuf),
    /// A PostgreSQL URL (`postgres://user@host:port/db`, `postgresql://…`; a Unix
    /// socket folder as a percent-encoded host or `?host=/path`). Without a password in
    /// the URL, `PGPASSWORD` is used.
    Postgres(String),
    /// An in-memory SQLite database that lives as long as its [`Store`].
    Memory,
}

impl Location {
    /// Reads a `--db` value: `postgres://…` or `postgresql://…` is PostgreSQL,
    /// `sqlite:FILE` or anything else a SQLite file.
    pub fn parse(s: &str) -> Location {
        let lower = s.get(..13).unwrap_or(s).to_ascii_lowercase();
        if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
            Location::Postgres(s.to_string())
        } else if let Some(f) = s.strip_prefix("sqlite:") {
            Location::Sqlite(PathBuf::from(f))
        } else {
            Location::Sqlite(PathBuf::from(s))
        }
    }

    /// [`Location::parse`] of a path given on the command line.
    pub fn from_path(p: &Path) -> Location {
        match p.to_str() {
            Some(s) => Location::parse(s),
            None => Location::Sqlite(p.to_path_buf()),
        }
    }

    /// The engine.
    pub fn backend(&self) -> Backend {
        match self {
            Location::Postgres(_) => Backend::Postgres,
            _ => Backend::Sqlite,
        }
    }

    /// False for a SQLite file that does not exist (and for [`Location::Memory`]);
    /// a PostgreSQL database is taken to exist (connecting tells).
    pub fn exists(&self) -> bool {
        match self {
            Location::Sqlite(p) => p.is_file(),
            Location::Postgres(_) => true,
            Location::Memory => false,
        }
    }

    /// Opens (creating a SQLite file when missing) the store and brings its schema up
    /// to date.
    pub fn open(&self) -> Result<Store, StoreError> {
        Store::open_location(self)
    }

    /// The location as printed: a PostgreSQL URL's password (in the authority or as a
    /// `password=` parameter) is replaced by `***`.
    pub fn redacted(&self) -> String {
        match self {
            Location::Sqlite(p) => p.display().to_string(),
            Location::Memory => ":memory:".to_string(),
            Location::Postgres(u) => redact_url(u),
        }
    }
}

fn redact_url(u: &str) -> String {
    let (scheme, rest) = u.split_once("://").unwrap_or(("", u));
    let auth_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (auth, tail) = rest.split_at(auth_end);
    let auth = match auth.rsplit_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((name, _)) => format!("{name}:***@{host}"),
            None => auth.to_string(),
        },
        None => auth.to_string(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let q: Vec<String> = query
                .split('&')
                .map(|kv| match kv.split_once('=') {
                    Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                    _ => kv.to_string(),
                })
                .collect();
            format!("{path}?{}", q.join("&"))
        }
        None => tail.to_string(),
    };
    format!("{scheme}://{auth}{tail}")
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Location({})", self.redacted())
    }
}

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

/// An open store: one connection (for PostgreSQL, one taken from this process's pool
/// and given back when the store is dropped). `Send`, not `Sync`: open one per thread.
pub struct Store {
    conn: Conn,
    location: Location,
    path: String,
    /// Interned strings (test names, files) by text, loaded on first use. Ids never
    /// change once committed, so entries stay valid while other writers add strings.
    string_ids: Option<std::collections::HashMap<String, i64>>,
    /// Interned strings by id, loaded on first read and extended with the strings
    /// other writers added since.
    string_texts: Option<string_texts::StringTexts>,
}

/// The default store: `$CITRIAGE_DB` (a file or a `postgres://` URL), else
/// `$XDG_DATA_HOME/citriage/citriage.db`, else `$HOME/.local/share/citriage/citriage.db`,
/// else `./citriage.db`.
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

/// How long a SQLite writer waits for another writer's transaction before failing.
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// SQLite's page cache per connection, in KiB.
const SQLITE_CACHE_KIB: u64 = 128 * 1024;

/// How much of the file SQLite maps into the process (`mmap_size`).
const SQLITE_MMAP_BYTES: u64 = 0;

/// Puts a SQLite file in WAL mode. The mode is a property of the file, so once one
/// connection converted it there is nothing to do (and no lock taken). The conversion
/// needs the file to itself and SQLite does not call the busy handler for it, so
/// processes opening a fresh store at once would fail with "database is locked":
/// the conversion is tried again with a growing pause until `patience` has passed.
fn use_wal(conn: &rusqlite::Connection, patience: std::time::Duration) -> rusqlite::Result<()> {
    let mode = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, String>(0));
    let start = std::time::Instant::now();
    let mut pause = std::time::Duration::from_millis(2);
    loop {
        let result = match mode("PRAGMA journal_mode") {
            Ok(m) if m.eq_ignore_ascii_case("wal") || m.eq_ignore_ascii_case("memory") => return Ok(()),
            Ok(_) => mode("PRAGMA journal_mode = WAL").map(|_| ()),
            Err(e) => Err(e),
        };
        match result {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(e.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
                    && start.elapsed() < patience =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(std::time::Duration::from_millis(100));
            }
            // Converted: the next turn reads `wal` and returns.
            Ok(()) => {}
            Err(e) => return Err(e),
        }
    }
}

impl Store {
    /// Opens (creating if needed) a store and brings its schema up to date. `path` is
    /// read as [`Location::from_path`]: a SQLite file, or a `postgres://` URL.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Location::from_path(path).open()
    }

    /// An in-memory SQLite store (tests, benchmarks).
    pub fn open_in_memory() -> Result<Store, StoreError> {
        Location::Memory.open()
    }

    /// Opens a store at a location.
    pub fn open_location(location: &Location) -> Result<Store, StoreError> {
        let path = location.redacted();
        let conn = match location {
            Location::Sqlite(file) => {
                if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(|source| StoreError::Dir { path: path.clone(), source })?;
                }
                rusqlite::Connection::open(file).map_err(|source| StoreError::Sqlite { path: path.clone(), source })?
            }
            Location::Memory => rusqlite::Connection::open_in_memory()
                .map_err(|source| StoreError::Sqlite { path: path.clone(), source })?,
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => {
                let c = pg::connect(url).map_err(|e| match e {
                    DbError::Msg(reason) if reason.starts_with("bad URL") => {
                        StoreError::Refused { path: path.clone(), reason }
                    }
                    e => StoreError::from_db(&path, e),
                })?;
                let migrated = c.pool_migrated();
                let conn = Conn::Pg(Box::new(std::cell::RefCell::new(c)));
                if !migrated {
                    match schema::migrate_postgres(&conn).map_err(|e| StoreError::from_db(&path, e))? {
                        Err(found) => return Err(StoreError::TooNew { path, found, known: SCHEMA_VERSION }),
                        Ok(_) => {
                            if let Conn::Pg(c) = &conn {
                                c.borrow().set_pool_migrated();
                            }
                        }
                    }
                }
                return Ok(Store { conn, location: location.clone(), path, string_ids: None, string_texts: None });
            }
            #[cfg(not(feature = "postgres"))]
            Location::Postgres(_) => {
                return Err(StoreError::Refused {
                    path,
                    reason: "this citriage was built without PostgreSQL support (cargo feature `postgres`)".into(),
                })
            }
        };
        let sql = |source| StoreError::Sqlite { path: path.clone(), source };
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
        use_wal(&conn, BUSY_TIMEOUT).map_err(sql)?;
        conn.execute_batch(&format!(
            "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;
             PRAGMA cache_size = -{SQLITE_CACHE_KIB}; PRAGMA mmap_size = {SQLITE_MMAP_BYTES}; PRAGMA temp_store = MEMORY;"
        ))
        .map_err(sql)?;
        let conn = Conn::Sqlite(conn);
        if let Err(found) = schema::migrate_sqlite(&conn).map_err(|e| StoreError::from_db(&path, e))? {
            return Err(StoreError::TooNew { path, found, known: SCHEMA_VERSION });
        }
        Ok(Store { conn, location: location.clone(), path, string_ids: None, string_texts: None })
    }

    /// The store as printed: a file path, or a PostgreSQL URL without its password.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Where the store lives ([`Location::open`] opens another connection to it).
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// Caps this connection's SQLite page cache at `kib` KiB (the default is 128 MiB),
    /// for a connection that reads each page about once (a pass job by job), so that
    /// memory goes to what is built from the rows instead. Nothing on PostgreSQL.
    pub fn limit_page_cache(&self, kib: u64) -> Result<(), StoreError> {
        if self.backend() != Backend::Sqlite {
            return Ok(());
        }
        self.conn.reader().batch(&format!("PRAGMA cache_size = -{kib}")).map_err(|e| self.err(e))
    }

    /// Hands back what this connection holds only to read faster: SQLite's cached pages
    /// and the interned strings' texts (both read again when needed), for a command
    /// about to build a large structure from what it has read.
    pub fn release_read_caches(&mut self) -> Result<(), StoreError> {
        self.string_texts = None;
        if self.backend() != Backend::Sqlite {
            return Ok(());
        }
        self.conn.reader().batch("PRAGMA shrink_memory").map_err(|e| self.err(e))
    }

    /// The engine.
    pub fn backend(&self) -> Backend {
        self.conn.backend()
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        match &self.conn {
            Conn::Sqlite(_) => self.conn.reader().int("PRAGMA user_version", &[]),
            #[cfg(feature = "postgres")]
            Conn::Pg(_) => schema::pg_version(&mut self.conn.reader()),
        }
        .map_err(|e| self.err(e))
    }

    /// A number that changes whenever another connection commits a write, and never
    /// for reads: SQLite's `data_version`; on PostgreSQL the count of change
    /// notifications received since the first call. Keep the store open and compare
    /// successive values to notice that the store changed.
    pub fn data_version(&self) -> Result<i64, StoreError> {
        match &self.conn {
            Conn::Sqlite(_) => self.conn.reader().int("PRAGMA data_version", &[]),
            #[cfg(feature = "postgres")]
            Conn::Pg(c) => c
                .try_borrow_mut()
                .map_err(|_| DbError::Msg("the connection is in use".into()))
                .and_then(|mut c| c.changes()),
        }
        .map_err(|e| self.err(e))
    }

    fn err(&self, e: DbError) -> StoreError {
        StoreError::from_db(&self.path, e)
    }

    fn corrupt(&self, detail: String) -> StoreError {
        StoreError::Corrupt { path: self.path.clone(), detail }
    }

    /// Imports a snapshot in one transaction. Importing the same content for the same
    /// dataset and date again is a no-op that returns the stored copy (also when
    /// another writer stores it at the same moment).
    pub fn import_snapshot(&mut self, snap: &Snapshot, imported_at: &str) -> Result<ImportOutcome, StoreError> {
        let dataset = snap.meta.dataset.as_str();
        let date = snap.meta.date.to_string();
        let key = vals![dataset, date.as_str(), snap.meta.sha256.as_str()];
        let (id, inserted) = self
            .conn
            .write(&mut |tx| {
                let new = tx.opt(
                    "INSERT INTO snapshots (dataset, snapshot_date, source, sha256, job_count, imported_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT (dataset, snapshot_date, sha256) DO NOTHING RETURNING id",
                    vals![
                        dataset,
                        date.as_str(),
                        snap.meta.source.as_str(),
                        snap.meta.sha256.as_str(),
                        snap.jobs.len() as i64,
                        imported_at
                    ],
                    |r| r.i64(0),
                )?;
                let Some(id) = new else {
                    let id = tx.int(
                        "SELECT id FROM snapshots WHERE dataset = ?1 AND snapshot_date = ?2 AND sha256 = ?3",
                        key,
                    )?;
                    return Ok((id, false));
                };
                tx.bulk(
                    "snapshot_jobs",
                    &["snapshot_id", "job", "failing_days", "consistency", "flakes", "has_test_flakes"],
                    &mut |b| {
                        for e in &snap.jobs {
                            match &e.stats {
                                JobStats::Failures { failing_days } => {
                                    b.row(vals![id, e.job.as_str(), i64::from(*failing_days), Val::Null, Val::Null, 0])?
                                }
                                JobStats::Flakes(f) => b.row(vals![
                                    id,
                                    e.job.as_str(),
                                    Val::Null,
                                    f.consistency,
                                    f.flakes as i64,
                                    i64::from(f.test_flakes.is_some())
                                ])?,
                            }
                        }
                        Ok(())
                    },
                )?;
                let has_tests = snap.jobs.iter().any(|e| match &e.stats {
                    JobStats::Flakes(f) => f.test_flakes.as_ref().is_some_and(|t| !t.is_empty()),
                    JobStats::Failures { .. } => false,
                });
                if has_tests {
                    tx.bulk("snapshot_test_flakes", &["snapshot_id", "job", "test", "count"], &mut |b| {
                        for e in &snap.jobs {
                            if let JobStats::Flakes(f) = &e.stats {
                                for (t, n) in f.test_flakes.iter().flatten() {
                                    b.row(vals![id, e.job.as_str(), t.as_str(), *n as i64])?;
                                }
                            }
                        }
                        Ok(())
                    })?;
                }
                Ok((id, true))
            })
            .map_err(|e| self.err(e))?;
        Ok(ImportOutcome { snapshot: self.snapshot_header(id)?, inserted })
    }

    fn snapshot_header(&self, id: i64) -> Result<StoredSnapshot, StoreError> {
        let row = self
            .conn
            .reader()
            .one(
                "SELECT id, dataset, snapshot_date, source, sha256, job_count, imported_at FROM snapshots WHERE id = ?1",
                vals![id],
                header_row,
            )
            .map_err(|e| self.err(e))?;
        self.header_from_row(row)
    }

    fn header_from_row(&self, row: HeaderRow) -> Result<StoredSnapshot, StoreError> {
        let dataset: Dataset = row.1.parse().map_err(|e| self.corrupt(e))?;
        let date =
            Day::parse(&row.2).ok_or_else(|| self.corrupt(format!("snapshot {} has date {:?}", row.0, row.2)))?;
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
        let rows = self
            .conn
            .reader()
            .rows(
                "SELECT id, dataset, snapshot_date, source, sha256, job_count, imported_at FROM snapshots
                 WHERE CAST(?1 AS TEXT) IS NULL OR dataset = ?1 ORDER BY dataset, snapshot_date, id",
                vals![dataset.map(|d| d.as_str())],
                header_row,
            )
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

    /// Loads a stored snapshot in full (one consistent read).
    pub fn load_snapshot(&self, id: i64) -> Result<Snapshot, StoreError> {
        let h = self.snapshot_header(id)?;
        type JobRow = (String, Option<i64>, Option<f64>, Option<i64>, i64);
        let (mut tests, rows) = self
            .conn
            .read(&mut |tx| {
                let mut tests: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
                tx.each(
                    "SELECT job, test, count FROM snapshot_test_flakes WHERE snapshot_id = ?1",
                    vals![id],
                    &mut |r| {
                        tests.entry(r.string(0)?).or_default().insert(r.string(1)?, r.i64(2)?.max(0) as u64);
                        Ok(())
                    },
                )?;
                let rows: Vec<JobRow> = tx.rows(
                    "SELECT job, failing_days, consistency, flakes, has_test_flakes FROM snapshot_jobs
                     WHERE snapshot_id = ?1 ORDER BY job",
                    vals![id],
                    |r| Ok((r.string(0)?, r.opt_i64(1)?, r.opt_f64(2)?, r.opt_i64(3)?, r.i64(4)?)),
                )?;
                Ok((tests, rows))
            })
            .map_err(|e| self.err(e))?;
        let mut jobs = Vec::with_capacity(rows.len());
        for (job, days, consistency, flakes, has_tests) in rows {
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
        let rows = self
            .conn
            .reader()
            .rows("SELECT job FROM snapshot_jobs WHERE snapshot_id = ?1", vals![id], |r| r.string(0))
            .map_err(|e| self.err(e))?;
        Ok(rows.into_iter().collect())
    }
}

type HeaderRow = (i64, String, String, String, String, i64, String);

fn header_row(r: &db::Row<'_>) -> Result<HeaderRow, DbError> {
    Ok((r.i64(0)?, r.string(1)?, r.string(2)?, r.string(3)?, r.string(4)?, r.i64(5)?, r.string(6)?))
}
