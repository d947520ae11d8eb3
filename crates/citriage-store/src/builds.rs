//! Builds, test results and artifact indexes in the store. A build is written in one
//! transaction that replaces any earlier copy, so re-ingesting is idempotent and a
//! crash mid-build leaves either the old copy or the new one, never half of each.

use crate::{Store, StoreError};
pub use citriage_model::build::{BuildRecord, StoredTest};
use rusqlite::{params, OptionalExtension};

impl Store {
    /// Writes (or replaces) one build in one transaction.
    pub fn put_build(&mut self, b: &BuildRecord) -> Result<i64, StoreError> {
        let path = self.path.clone();
        let sql = |source| StoreError::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        tx.execute("DELETE FROM builds WHERE bucket = ?1 AND path = ?2", params![b.bucket, b.path]).map_err(sql)?;
        tx.execute(
            "INSERT INTO builds (bucket, path, job, build_id, kind, pr, commit_sha, repo_commit, repo_version, repos,
                started, finished, duration, result, state, executor, origin, problems, complete)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)",
            params![
                b.bucket,
                b.path,
                b.job,
                b.build_id,
                b.kind,
                b.pr.map(|p| p as i64),
                b.commit_sha,
                b.repo_commit,
                b.repo_version,
                b.repos,
                b.started,
                b.finished,
                b.duration,
                b.result,
                b.state,
                b.executor,
                b.origin,
                serde_json::to_string(&b.problems).unwrap_or_else(|_| "[]".into()),
                b.complete
            ],
        )
        .map_err(sql)?;
        let id = tx.last_insert_rowid();
        {
            let mut st = tx
                .prepare(
                    "INSERT INTO test_results (build, seq, file, suite, classname, name, status, duration, failure_text, attempt, informing, kettle_name)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                )
                .map_err(sql)?;
            for (i, t) in b.tests.iter().enumerate() {
                st.execute(params![
                    id,
                    i as i64,
                    t.file,
                    t.suite,
                    t.classname,
                    t.name,
                    t.status,
                    t.duration,
                    t.failure_text,
                    t.attempt,
                    t.informing,
                    t.kettle_name
                ])
                .map_err(sql)?;
            }
            let mut sa =
                tx.prepare("INSERT OR REPLACE INTO artifacts (build, path, size) VALUES (?1, ?2, ?3)").map_err(sql)?;
            for (p, size) in &b.artifacts {
                sa.execute(params![id, p, size.map(|s| s as i64)]).map_err(sql)?;
            }
        }
        tx.commit().map_err(sql)?;
        Ok(id)
    }

    /// True when a complete copy of the build is stored (re-fetching can be skipped).
    pub fn has_complete_build(&self, bucket: &str, path: &str) -> Result<bool, StoreError> {
        let v: Option<i64> = self
            .conn
            .query_row("SELECT complete FROM builds WHERE bucket = ?1 AND path = ?2", params![bucket, path], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.err(e))?;
        Ok(v == Some(1))
    }

    /// Every stored build (without tests), ordered by job, then start time, then id.
    pub fn builds(&self, job: Option<&str>) -> Result<Vec<BuildRecord>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT bucket, path, job, build_id, kind, pr, commit_sha, repo_commit, repo_version, repos, started,
                        finished, duration, result, state, executor, origin, problems, complete
                 FROM builds WHERE ?1 IS NULL OR job = ?1 ORDER BY job, started, build_id, path",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![job], |r| {
                let problems: String = r.get(17)?;
                Ok(BuildRecord {
                    bucket: r.get(0)?,
                    path: r.get(1)?,
                    job: r.get(2)?,
                    build_id: r.get(3)?,
                    kind: r.get(4)?,
                    pr: r.get::<_, Option<i64>>(5)?.map(|p| p as u64),
                    commit_sha: r.get(6)?,
                    repo_commit: r.get(7)?,
                    repo_version: r.get(8)?,
                    repos: r.get(9)?,
                    started: r.get(10)?,
                    finished: r.get(11)?,
                    duration: r.get(12)?,
                    result: r.get(13)?,
                    state: r.get(14)?,
                    executor: r.get(15)?,
                    origin: r.get(16)?,
                    problems: serde_json::from_str(&problems).unwrap_or_default(),
                    complete: r.get(18)?,
                    tests: Vec::new(),
                    artifacts: Vec::new(),
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    /// Test results of every stored build, as (bucket, path, test), ordered by build then position.
    pub fn test_results(&self) -> Result<Vec<(String, String, StoredTest)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT b.bucket, b.path, t.file, t.suite, t.classname, t.name, t.status, t.duration, t.failure_text, t.attempt, t.informing, t.kettle_name
                 FROM test_results t JOIN builds b ON b.id = t.build ORDER BY b.job, b.started, b.build_id, b.path, t.seq",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    StoredTest {
                        file: r.get(2)?,
                        suite: r.get(3)?,
                        classname: r.get(4)?,
                        name: r.get(5)?,
                        status: r.get(6)?,
                        duration: r.get(7)?,
                        failure_text: r.get(8)?,
                        attempt: r.get(9)?,
                        informing: r.get(10)?,
                        kettle_name: r.get(11)?,
                    },
                ))
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    /// Counts of stored builds, test results and artifacts (for summaries and tests).
    pub fn build_counts(&self) -> Result<(u64, u64, u64), StoreError> {
        let q = |sql: &str| -> Result<u64, StoreError> {
            self.conn.query_row(sql, [], |r| r.get::<_, i64>(0)).map(|n| n as u64).map_err(|e| self.err(e))
        };
        Ok((
            q("SELECT count(*) FROM builds")?,
            q("SELECT count(*) FROM test_results")?,
            q("SELECT count(*) FROM artifacts")?,
        ))
    }

    /// Runs a read-only SQL query returning rows of text/number cells (for the
    /// differential kettle check and ad-hoc inspection).
    pub fn query_rows(&self, sql: &str) -> Result<Vec<Vec<serde_json::Value>>, StoreError> {
        let mut stmt = self.conn.prepare(sql).map_err(|e| self.err(e))?;
        let n = stmt.column_count();
        let rows = stmt
            .query_map([], |r| {
                let mut v = Vec::with_capacity(n);
                for i in 0..n {
                    let cell = match r.get_ref(i)? {
                        rusqlite::types::ValueRef::Null => serde_json::Value::Null,
                        rusqlite::types::ValueRef::Integer(x) => serde_json::Value::from(x),
                        rusqlite::types::ValueRef::Real(x) => serde_json::Value::from(x),
                        rusqlite::types::ValueRef::Text(t) => {
                            serde_json::Value::from(String::from_utf8_lossy(t).into_owned())
                        }
                        rusqlite::types::ValueRef::Blob(_) => serde_json::Value::Null,
                    };
                    v.push(cell);
                }
                Ok(v)
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }
}
