//! Builds, test results and artifact indexes in the store. A build is written in one
//! transaction that replaces any earlier copy, so re-ingesting is idempotent and a
//! crash mid-build leaves either the old copy or the new one, never half of each.
//! Test names, suites and file names are interned in a `strings` table so millions
//! of results stay compact; skipped tests are counted on the build, not stored.
//! Reads go job by job so memory stays bounded by one job's history.

use crate::{Store, StoreError};
use rusqlite::{params, OptionalExtension};
use std::collections::HashMap;
use std::sync::Arc;

pub use citriage_model::build::{BuildRecord, LogExcerpt, StoredTest};

const BUILD_COLUMNS: &str =
    "id, bucket, path, job, build_id, kind, pr, commit_sha, repo_commit, repo_version, repos, started,
    finished, duration, result, state, executor, origin, problems, complete, skipped_tests";

fn status_code(s: &str) -> i64 {
    match s {
        "failed" => 1,
        "error" => 2,
        "skipped" => 3,
        _ => 0,
    }
}

fn status_text(c: i64) -> &'static str {
    match c {
        1 => "failed",
        2 => "error",
        3 => "skipped",
        _ => "passed",
    }
}

fn build_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, BuildRecord, i64)> {
    let problems: String = r.get(18)?;
    Ok((
        r.get(0)?,
        BuildRecord {
            bucket: r.get(1)?,
            path: r.get(2)?,
            job: r.get(3)?,
            build_id: r.get(4)?,
            kind: r.get(5)?,
            pr: r.get::<_, Option<i64>>(6)?.map(|p| p as u64),
            commit_sha: r.get(7)?,
            repo_commit: r.get(8)?,
            repo_version: r.get(9)?,
            repos: r.get(10)?,
            started: r.get(11)?,
            finished: r.get(12)?,
            duration: r.get(13)?,
            result: r.get(14)?,
            state: r.get(15)?,
            executor: r.get(16)?,
            origin: r.get(17)?,
            problems: serde_json::from_str(&problems).unwrap_or_default(),
            complete: r.get(19)?,
            tests: Vec::new(),
            artifacts: Vec::new(),
            excerpts: Vec::new(),
        },
        r.get(20)?,
    ))
}

/// A stored build as [`Store::build_index`] lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexedBuild {
    /// The build's row id in the store.
    pub id: i64,
    /// The build without tests, excerpts or artifacts.
    pub record: BuildRecord,
    /// Failed and errored test results.
    pub failed_tests: u32,
}

impl Store {
    fn ensure_string_ids(&mut self) -> Result<(), StoreError> {
        if self.string_ids.is_none() {
            let mut m = HashMap::new();
            let mut st = self.conn.prepare("SELECT id, text FROM strings").map_err(|e| self.err(e))?;
            let rows =
                st.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))).map_err(|e| self.err(e))?;
            for r in rows {
                let (id, t) = r.map_err(|e| self.err(e))?;
                m.insert(t, id);
            }
            drop(st);
            self.string_ids = Some(m);
        }
        Ok(())
    }

    fn ensure_string_texts(&mut self) -> Result<(), StoreError> {
        let count: i64 =
            self.conn.query_row("SELECT count(*) FROM strings", [], |r| r.get(0)).map_err(|e| self.err(e))?;
        if self.string_texts.as_ref().map(|m| m.len() as i64) != Some(count) {
            let mut m = HashMap::new();
            let mut st = self.conn.prepare("SELECT id, text FROM strings").map_err(|e| self.err(e))?;
            let rows =
                st.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))).map_err(|e| self.err(e))?;
            for r in rows {
                let (id, t) = r.map_err(|e| self.err(e))?;
                m.insert(id, Arc::from(t.as_str()));
            }
            drop(st);
            self.string_texts = Some(m);
        }
        Ok(())
    }

    /// Writes (or replaces) one build in one transaction.
    pub fn put_build(&mut self, b: &BuildRecord) -> Result<i64, StoreError> {
        self.ensure_string_ids()?;
        let path = self.path.clone();
        let sql = |source| StoreError::Sqlite { path: path.clone(), source };
        let mut ids = self.string_ids.take().unwrap_or_default();
        let mut new_strings: Vec<String> = Vec::new();
        let result = (|| -> Result<i64, StoreError> {
            let tx = self.conn.transaction().map_err(sql)?;
            tx.execute("DELETE FROM builds WHERE bucket = ?1 AND path = ?2", params![b.bucket, b.path]).map_err(sql)?;
            let skipped = b.tests.iter().filter(|t| t.status == "skipped").count() as i64;
            let failed = b.tests.iter().filter(|t| t.status == "failed" || t.status == "error").count() as i64;
            tx.execute(
                "INSERT INTO builds (bucket, path, job, build_id, kind, pr, commit_sha, repo_commit, repo_version, repos,
                    started, finished, duration, result, state, executor, origin, problems, complete, skipped_tests,
                    failed_tests)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)",
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
                    b.complete,
                    skipped,
                    failed
                ],
            )
            .map_err(sql)?;
            let id = tx.last_insert_rowid();
            {
                let mut ins_str = tx.prepare_cached("INSERT INTO strings (text) VALUES (?1)").map_err(sql)?;
                let mut intern = |t: &str| -> Result<i64, StoreError> {
                    if let Some(&i) = ids.get(t) {
                        return Ok(i);
                    }
                    ins_str.execute(params![t]).map_err(sql)?;
                    let i = tx.last_insert_rowid();
                    ids.insert(t.to_string(), i);
                    new_strings.push(t.to_string());
                    Ok(i)
                };
                let mut rows = Vec::with_capacity(b.tests.len());
                for t in b.tests.iter().filter(|t| t.status != "skipped") {
                    rows.push((
                        intern(&t.file)?,
                        intern(&t.suite)?,
                        intern(&t.classname)?,
                        intern(&t.name)?,
                        match &t.kettle_name {
                            Some(k) => Some(intern(k)?),
                            None => None,
                        },
                        t,
                    ));
                }
                drop(ins_str);
                let mut st = tx
                    .prepare_cached(
                        "INSERT INTO test_results (build, seq, file, suite, classname, name, kettle_name, status, duration, attempt, informing, failure_text)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                    )
                    .map_err(sql)?;
                for (i, (file, suite, class, name, kettle, t)) in rows.into_iter().enumerate() {
                    st.execute(params![
                        id,
                        i as i64,
                        file,
                        suite,
                        class,
                        name,
                        kettle,
                        status_code(&t.status),
                        t.duration,
                        t.attempt,
                        t.informing,
                        t.failure_text
                    ])
                    .map_err(sql)?;
                }
                let mut sa = tx
                    .prepare_cached("INSERT OR REPLACE INTO artifacts (build, path, size) VALUES (?1, ?2, ?3)")
                    .map_err(sql)?;
                for (p, size) in &b.artifacts {
                    sa.execute(params![id, p, size.map(|s| s as i64)]).map_err(sql)?;
                }
                let mut se = tx
                    .prepare_cached(
                        "INSERT INTO build_excerpts (build, seq, source, line_start, line_end, text)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    )
                    .map_err(sql)?;
                for (i, e) in b.excerpts.iter().enumerate() {
                    se.execute(params![id, i as i64, e.source, e.line_start, e.line_end, e.text]).map_err(sql)?;
                }
            }
            tx.commit().map_err(sql)?;
            Ok(id)
        })();
        if result.is_err() {
            // The transaction rolled back: forget the strings it would have added.
            for t in &new_strings {
                ids.remove(t);
            }
        } else if !new_strings.is_empty() {
            // New strings: the id → text map must be reloaded before the next read.
            self.string_texts = None;
        }
        self.string_ids = Some(ids);
        result
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
            .prepare(&format!(
                "SELECT {BUILD_COLUMNS} FROM builds WHERE ?1 IS NULL OR job = ?1 ORDER BY job, started, build_id, path"
            ))
            .map_err(|e| self.err(e))?;
        let rows = stmt.query_map(params![job], build_from_row).map_err(|e| self.err(e))?;
        rows.map(|r| r.map(|(_, b, _)| b)).collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    /// The distinct job names of the stored builds, sorted.
    pub fn build_jobs(&self) -> Result<Vec<String>, StoreError> {
        let mut stmt = self.conn.prepare("SELECT DISTINCT job FROM builds ORDER BY job").map_err(|e| self.err(e))?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0)).map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    /// One job's builds, oldest first, with the test results of those started after
    /// `tests_since` (all when `None`). Skipped tests are not stored.
    pub fn job_builds_with_tests(
        &mut self,
        job: &str,
        tests_since: Option<i64>,
    ) -> Result<Vec<BuildRecord>, StoreError> {
        self.job_builds_with_tests_opts(job, tests_since, true)
    }

    /// Like [`Store::job_builds_with_tests`]; without `full`, test results carry only
    /// what metrics need (names, status, duration, attempt): no failure text, file or
    /// suite, which keeps reads of large windows fast.
    pub fn job_builds_with_tests_opts(
        &mut self,
        job: &str,
        tests_since: Option<i64>,
        full: bool,
    ) -> Result<Vec<BuildRecord>, StoreError> {
        self.ensure_string_texts()?;
        // Borrow the id → text map for the read without copying it.
        let texts = self.string_texts.take().unwrap_or_default();
        let result = self.load_job_builds(job, tests_since, full, &texts);
        self.string_texts = Some(texts);
        result
    }

    fn load_job_builds(
        &self,
        job: &str,
        tests_since: Option<i64>,
        full: bool,
        texts: &HashMap<i64, Arc<str>>,
    ) -> Result<Vec<BuildRecord>, StoreError> {
        let text = |i: i64| texts.get(&i).map(|t| t.to_string()).unwrap_or_default();
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {BUILD_COLUMNS} FROM builds WHERE job = ?1 ORDER BY started, build_id, path"
            ))
            .map_err(|e| self.err(e))?;
        let rows: Vec<(i64, BuildRecord, i64)> = stmt
            .query_map(params![job], build_from_row)
            .map_err(|e| self.err(e))?
            .collect::<Result<_, _>>()
            .map_err(|e| self.err(e))?;
        drop(stmt);
        let mut tstmt = self
            .conn
            .prepare_cached(if full {
                "SELECT t.build, t.file, t.suite, t.classname, t.name, t.kettle_name, t.status, t.duration, t.attempt,
                        t.informing, t.failure_text
                     FROM builds b JOIN test_results t ON t.build = b.id
                     WHERE b.job = ?1 AND (?2 IS NULL OR b.started > ?2) ORDER BY t.build, t.seq"
            } else {
                "SELECT t.build, NULL, NULL, t.classname, t.name, t.kettle_name, t.status, t.duration, t.attempt,
                        t.informing, NULL
                     FROM builds b JOIN test_results t ON t.build = b.id
                     WHERE b.job = ?1 AND (?2 IS NULL OR b.started > ?2) ORDER BY t.build, t.seq"
            })
            .map_err(|e| self.err(e))?;
        let mut by_build: HashMap<i64, Vec<StoredTest>> = HashMap::new();
        let trows = tstmt
            .query_map(params![job, tests_since], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    StoredTest {
                        file: r.get::<_, Option<i64>>(1)?.map(text).unwrap_or_default(),
                        suite: r.get::<_, Option<i64>>(2)?.map(text).unwrap_or_default(),
                        classname: text(r.get(3)?),
                        name: text(r.get(4)?),
                        kettle_name: r.get::<_, Option<i64>>(5)?.map(text),
                        status: status_text(r.get(6)?).to_string(),
                        duration: r.get(7)?,
                        attempt: r.get(8)?,
                        informing: r.get(9)?,
                        failure_text: r.get(10)?,
                    },
                ))
            })
            .map_err(|e| self.err(e))?;
        for r in trows {
            let (b, t) = r.map_err(|e| self.err(e))?;
            by_build.entry(b).or_default().push(t);
        }
        drop(tstmt);
        let mut excerpts: HashMap<i64, Vec<LogExcerpt>> = HashMap::new();
        if full {
            let mut st = self
                .conn
                .prepare_cached(
                    "SELECT e.build, e.source, e.line_start, e.line_end, e.text
                     FROM builds b JOIN build_excerpts e ON e.build = b.id
                     WHERE b.job = ?1 AND (?2 IS NULL OR b.started > ?2) ORDER BY e.build, e.seq",
                )
                .map_err(|e| self.err(e))?;
            let erows = st
                .query_map(params![job, tests_since], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        LogExcerpt { source: r.get(1)?, line_start: r.get(2)?, line_end: r.get(3)?, text: r.get(4)? },
                    ))
                })
                .map_err(|e| self.err(e))?;
            for r in erows {
                let (b, e) = r.map_err(|e| self.err(e))?;
                excerpts.entry(b).or_default().push(e);
            }
        }
        let mut out = Vec::with_capacity(rows.len());
        for (id, mut b, _) in rows {
            if let Some(tests) = by_build.remove(&id) {
                b.tests = tests;
            }
            if let Some(e) = excerpts.remove(&id) {
                b.excerpts = e;
            }
            out.push(b);
        }
        Ok(out)
    }

    /// Every stored build without its tests, as (row id, build, failed tests), ordered
    /// by job, then start time, build id and path. The row id identifies the build in
    /// [`Store::for_each_failure_text`] and [`Store::for_each_excerpt`].
    pub fn build_index(&self) -> Result<Vec<IndexedBuild>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT {BUILD_COLUMNS}, failed_tests FROM builds ORDER BY job, started, build_id, path"))
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                let (id, record, _) = build_from_row(r)?;
                Ok(IndexedBuild { id, record, failed_tests: r.get::<_, i64>(21)?.max(0) as u32 })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    /// Calls `f` with every failed test result that has a failure text, of builds
    /// started after `since` (all builds when `None`): the build's row id, the result's
    /// position, the test name and the text; by build, then position.
    pub fn for_each_failure_text(
        &mut self,
        since: Option<i64>,
        mut f: impl FnMut(i64, u32, &str, &str),
    ) -> Result<u64, StoreError> {
        self.ensure_string_texts()?;
        let texts = self.string_texts.take().unwrap_or_default();
        let result = (|| {
            let mut st = self
                .conn
                .prepare(
                    // Builds first (CROSS JOIN keeps the order): a window reads only its builds' results.
                    "SELECT t.build, t.seq, t.name, t.failure_text FROM builds b CROSS JOIN test_results t ON t.build = b.id
                     WHERE (?1 IS NULL OR b.started > ?1) AND t.status IN (1, 2) AND t.failure_text IS NOT NULL
                     ORDER BY t.build, t.seq",
                )
                .map_err(|e| self.err(e))?;
            let mut rows = st.query(params![since]).map_err(|e| self.err(e))?;
            let mut n = 0u64;
            while let Some(r) = rows.next().map_err(|e| self.err(e))? {
                let build: i64 = r.get(0).map_err(|e| self.err(e))?;
                let seq: i64 = r.get(1).map_err(|e| self.err(e))?;
                let name: i64 = r.get(2).map_err(|e| self.err(e))?;
                let text = r.get_ref(3).map_err(|e| self.err(e))?.as_str().unwrap_or("");
                let name = texts.get(&name).map(|t| &**t).unwrap_or("");
                f(build, seq as u32, name, text);
                n += 1;
            }
            Ok(n)
        })();
        self.string_texts = Some(texts);
        result
    }

    /// Calls `f` with every stored log excerpt of builds started after `since` (all
    /// when `None`): the build's row id and the excerpt; by build, then position.
    pub fn for_each_excerpt(&self, since: Option<i64>, mut f: impl FnMut(i64, &LogExcerpt)) -> Result<u64, StoreError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT e.build, e.source, e.line_start, e.line_end, e.text FROM builds b CROSS JOIN build_excerpts e
                 ON e.build = b.id WHERE ?1 IS NULL OR b.started > ?1 ORDER BY e.build, e.seq",
            )
            .map_err(|e| self.err(e))?;
        let mut rows = st.query(params![since]).map_err(|e| self.err(e))?;
        let mut n = 0u64;
        while let Some(r) = rows.next().map_err(|e| self.err(e))? {
            let build: i64 = r.get(0).map_err(|e| self.err(e))?;
            let e = LogExcerpt {
                source: r.get(1).map_err(|e| self.err(e))?,
                line_start: r.get(2).map_err(|e| self.err(e))?,
                line_end: r.get(3).map_err(|e| self.err(e))?,
                text: r.get(4).map_err(|e| self.err(e))?,
            };
            f(build, &e);
            n += 1;
        }
        Ok(n)
    }

    /// SQLite's `data_version` of this connection: it changes whenever another
    /// connection commits to the database, and never for reads. Keep the connection
    /// open and compare successive values to notice that the store changed.
    pub fn data_version(&self) -> Result<i64, StoreError> {
        self.conn.query_row("PRAGMA data_version", [], |r| r.get(0)).map_err(|e| self.err(e))
    }

    /// Test results of every stored build, as (bucket, path, test), ordered by build
    /// then position. Meant for small stores and tests; large stores read job by job.
    pub fn test_results(&mut self) -> Result<Vec<(String, String, StoredTest)>, StoreError> {
        let mut out = Vec::new();
        for job in self.build_jobs()? {
            for b in self.job_builds_with_tests(&job, None)? {
                for t in b.tests {
                    out.push((b.bucket.clone(), b.path.clone(), t));
                }
            }
        }
        Ok(out)
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
}
