//! Builds, test results and artifact indexes in the store. A build is written in one
//! transaction that replaces any earlier copy, so re-ingesting is idempotent and a
//! crash mid-build leaves either the old copy or the new one, never half of each.
//! Test names, suites and file names are interned in a `strings` table so millions
//! of results stay compact; skipped tests are counted on the build, not stored.
//! Reads go job by job so memory stays bounded by one job's history.
//!
//! Several writers may share a store: interning is an upsert that reads back the id
//! another writer gave a string first, so this process's cache of ids (which never
//! change once committed) stays valid; on PostgreSQL two writers of the same build
//! take turns on an advisory lock of its bucket and path, so the second replaces the
//! first instead of colliding with it.

use crate::db::{vals, Backend, DbError, Exec, Row, Tx, Val};
use crate::{Store, StoreError};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

pub use citriage_model::build::{BuildRecord, LogExcerpt, StoredTest, TestgridFacts};

pub(crate) const BUILD_COLUMNS: &str =
    "id, bucket, path, job, build_id, kind, pr, commit_sha, repo_commit, repo_version, repos, started,
    finished, duration, result, state, executor, origin, problems, complete, skipped_tests, kettle, testgrid, sources";

/// Builds in the order every listing uses (a build without a start time first, as
/// SQLite sorts NULL; PostgreSQL is told so).
pub(crate) const BUILD_ORDER: &str = "job, started NULLS FIRST, build_id, path";

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

pub(crate) fn build_from_row(r: &Row<'_>) -> Result<(i64, BuildRecord, i64), DbError> {
    let problems = r.str(18)?;
    Ok((
        r.i64(0)?,
        BuildRecord {
            bucket: r.string(1)?,
            path: r.string(2)?,
            job: r.string(3)?,
            build_id: r.string(4)?,
            kind: r.string(5)?,
            pr: r.opt_i64(6)?.map(|p| p as u64),
            commit_sha: r.opt_string(7)?,
            repo_commit: r.opt_string(8)?,
            repo_version: r.opt_string(9)?,
            repos: r.opt_string(10)?,
            started: r.opt_i64(11)?,
            finished: r.opt_i64(12)?,
            duration: r.opt_i64(13)?,
            result: r.opt_string(14)?,
            state: r.opt_string(15)?,
            executor: r.opt_string(16)?,
            origin: r.string(17)?,
            problems: serde_json::from_str(problems).unwrap_or_default(),
            complete: r.bool(19)?,
            tests: Vec::new(),
            artifacts: Vec::new(),
            excerpts: Vec::new(),
            kettle: r.opt_string(21)?.and_then(|k| serde_json::from_str(&k).ok()),
            testgrid: r.opt_string(22)?.and_then(|t| serde_json::from_str(&t).ok()),
            versions: Vec::new(),
        },
        r.i64(20)?,
    ))
}

/// The other sources' facts kept on a build's row (`sources`), as JSON.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Sources {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    testgrid: Option<TestgridFacts>,
}

/// The `sources` column of a row read with [`BUILD_COLUMNS`].
pub(crate) fn testgrid_of_row(r: &Row<'_>) -> Result<Option<TestgridFacts>, DbError> {
    Ok(r.opt_str(23)?.and_then(|s| serde_json::from_str::<Sources>(s).ok()).and_then(|s| s.testgrid))
}

/// The `sources` column's value for these facts.
pub(crate) fn sources_json(testgrid: Option<&TestgridFacts>) -> Option<String> {
    testgrid.and_then(|t| serde_json::to_string(&Sources { testgrid: Some(t.clone()) }).ok())
}

/// A stored build's row as a merge sees it: the build without tests, artifacts or
/// excerpts, and what TestGrid showed of it when that is kept.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredBuildHead {
    pub record: BuildRecord,
    pub testgrid: Option<TestgridFacts>,
}

/// What to write for a build, decided from what is stored under its bucket and path
/// ([`Store::put_build_merging`]).
#[derive(Debug, Clone, PartialEq)]
pub enum BuildWrite {
    /// The build handed in, replacing any stored copy (tests and all), with these
    /// problems added and these TestGrid facts kept.
    Incoming { extra_problems: Vec<String>, testgrid: Option<TestgridFacts> },
    /// The stored build's tests, artifacts and excerpts kept; its fields replaced by
    /// these (`head`'s tests, artifacts and excerpts are not read).
    StoredWith { head: Box<BuildRecord>, testgrid: Option<TestgridFacts> },
    /// Nothing to write.
    Unchanged,
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

/// A test result as stored: interned names by id.
struct RawTest {
    build: i64,
    file: Option<i64>,
    suite: Option<i64>,
    classname: i64,
    name: i64,
    kettle_name: Option<i64>,
    status: i64,
    duration: Option<f64>,
    attempt: i64,
    informing: bool,
    failure_text: Option<String>,
}

/// Interns `texts` (sorted, distinct, none in `ids` yet) and records their ids in
/// `ids` and their texts in `added`. A text another writer stored first keeps that
/// writer's id. Texts go in sorted order, so two writers never wait on each other in
/// opposite orders.
fn intern(
    tx: &mut Tx<'_>,
    texts: &[&str],
    ids: &mut HashMap<String, i64>,
    added: &mut Vec<String>,
) -> Result<(), DbError> {
    if texts.is_empty() {
        return Ok(());
    }
    match tx.backend() {
        Backend::Sqlite => {
            for &t in texts {
                let id = match tx.opt(
                    "INSERT INTO strings (text) VALUES (?1) ON CONFLICT (text) DO NOTHING RETURNING id",
                    vals![t],
                    |r| r.i64(0),
                )? {
                    Some(id) => id,
                    None => tx.int("SELECT id FROM strings WHERE text = ?1", vals![t])?,
                };
                ids.insert(t.to_string(), id);
                added.push(t.to_string());
            }
        }
        Backend::Postgres => {
            let list = [Val::Texts(texts)];
            tx.exec("INSERT INTO strings (text) SELECT unnest(?1::text[]) ON CONFLICT (text) DO NOTHING", &list)?;
            tx.each("SELECT id, text FROM strings WHERE text = ANY(?1)", &list, &mut |r| {
                let t = r.string(1)?;
                ids.insert(t.clone(), r.i64(0)?);
                added.push(t);
                Ok(())
            })?;
            if let Some(t) = texts.iter().find(|t| !ids.contains_key(**t)) {
                return Err(DbError::Msg(format!("the interned string {t:?} was not stored")));
            }
        }
    }
    Ok(())
}

/// The build fields a row gets besides the build's own: problems added by a merge,
/// and the other sources' facts.
#[derive(Default)]
pub(crate) struct RowExtras<'a> {
    pub extra_problems: &'a [String],
    pub testgrid: Option<&'a TestgridFacts>,
}

fn put_build_tx(
    tx: &mut Tx<'_>,
    b: &BuildRecord,
    extras: &RowExtras<'_>,
    ids: &mut HashMap<String, i64>,
    added: &mut Vec<String>,
) -> Result<i64, DbError> {
    // Writers of the same build take turns; the later one replaces the earlier.
    tx.take_turns(&format!(
        "build
{}
{}",
        b.bucket, b.path
    ))?;
    tx.exec("DELETE FROM builds WHERE bucket = ?1 AND path = ?2", vals![&b.bucket, &b.path])?;
    let skipped = b.tests.iter().filter(|t| t.status == "skipped").count() as i64;
    let failed = b.tests.iter().filter(|t| t.status == "failed" || t.status == "error").count() as i64;
    let problems = problems_json(b, extras.extra_problems);
    let kettle = b.kettle.as_ref().and_then(|k| serde_json::to_string(k).ok());
    let testgrid = b.testgrid.as_ref().and_then(|t| serde_json::to_string(t).ok());
    let sources = sources_json(extras.testgrid);
    let id = tx.int(
        "INSERT INTO builds (bucket, path, job, build_id, kind, pr, commit_sha, repo_commit, repo_version, repos,
            started, finished, duration, result, state, executor, origin, problems, complete, skipped_tests,
            failed_tests, kettle, testgrid, sources)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22,
            ?23, ?24)
         RETURNING id",
        vals![
            &b.bucket,
            &b.path,
            &b.job,
            &b.build_id,
            &b.kind,
            b.pr.map(|p| p as i64),
            &b.commit_sha,
            &b.repo_commit,
            &b.repo_version,
            &b.repos,
            b.started,
            b.finished,
            b.duration,
            &b.result,
            &b.state,
            &b.executor,
            &b.origin,
            problems.as_str(),
            b.complete,
            skipped,
            failed,
            &kettle,
            &testgrid,
            &sources
        ],
    )?;
    let kept: Vec<&StoredTest> = b.tests.iter().filter(|t| t.status != "skipped").collect();
    let missing: BTreeSet<&str> = kept
        .iter()
        .flat_map(|t| {
            [Some(t.file.as_str()), Some(&t.suite), Some(&t.classname), Some(&t.name), t.kettle_name.as_deref()]
        })
        .flatten()
        .filter(|t| !ids.contains_key(*t))
        .collect();
    intern(tx, &missing.into_iter().collect::<Vec<_>>(), ids, added)?;
    let id_of = |t: &str| -> Result<i64, DbError> {
        ids.get(t).copied().ok_or_else(|| DbError::Msg(format!("the string {t:?} has no id")))
    };
    if !kept.is_empty() {
        tx.bulk(
            "test_results",
            &[
                "build",
                "seq",
                "file",
                "suite",
                "classname",
                "name",
                "kettle_name",
                "status",
                "duration",
                "attempt",
                "informing",
                "failure_text",
            ],
            &mut |bk| {
                for (i, t) in kept.iter().enumerate() {
                    let kettle = match &t.kettle_name {
                        Some(k) => Some(id_of(k)?),
                        None => None,
                    };
                    bk.row(vals![
                        id,
                        i as i64,
                        id_of(&t.file)?,
                        id_of(&t.suite)?,
                        id_of(&t.classname)?,
                        id_of(&t.name)?,
                        kettle,
                        status_code(&t.status),
                        t.duration,
                        i64::from(t.attempt),
                        t.informing,
                        &t.failure_text
                    ])?;
                }
                Ok(())
            },
        )?;
    }
    if !b.artifacts.is_empty() {
        // One row per path; a path listed twice keeps its last size.
        let artifacts: BTreeMap<&str, Option<u64>> = b.artifacts.iter().map(|(p, s)| (p.as_str(), *s)).collect();
        tx.bulk("artifacts", &["build", "path", "size"], &mut |bk| {
            for (p, size) in &artifacts {
                bk.row(vals![id, *p, size.map(|s| s as i64)])?;
            }
            Ok(())
        })?;
    }
    if !b.excerpts.is_empty() {
        tx.bulk("build_excerpts", &["build", "seq", "source", "line_start", "line_end", "text"], &mut |bk| {
            for (i, e) in b.excerpts.iter().enumerate() {
                bk.row(vals![id, i as i64, &e.source, e.line_start, e.line_end, &e.text])?;
            }
            Ok(())
        })?;
    }
    crate::build_versions::write(tx, id, &b.versions)?;
    Ok(id)
}

/// The problems column: the build's problems, then those a merge adds.
fn problems_json(b: &BuildRecord, extra: &[String]) -> String {
    let all: Vec<&String> = b.problems.iter().chain(extra).collect();
    serde_json::to_string(&all).unwrap_or_else(|_| "[]".into())
}

/// Replaces a stored build's fields, keeping its tests, artifacts and excerpts (and
/// the counts of its tests).
fn put_build_head_tx(
    tx: &mut Tx<'_>,
    id: i64,
    b: &BuildRecord,
    testgrid: Option<&TestgridFacts>,
) -> Result<(), DbError> {
    let problems = problems_json(b, &[]);
    let kettle = b.kettle.as_ref().and_then(|k| serde_json::to_string(k).ok());
    let place = b.testgrid.as_ref().and_then(|t| serde_json::to_string(t).ok());
    let sources = sources_json(testgrid);
    tx.exec(
        "UPDATE builds SET job = ?2, build_id = ?3, kind = ?4, pr = ?5, commit_sha = ?6, repo_commit = ?7,
            repo_version = ?8, repos = ?9, started = ?10, finished = ?11, duration = ?12, result = ?13, state = ?14,
            executor = ?15, origin = ?16, problems = ?17, complete = ?18, kettle = ?19, testgrid = ?20, sources = ?21
         WHERE id = ?1",
        vals![
            id,
            &b.job,
            &b.build_id,
            &b.kind,
            b.pr.map(|p| p as i64),
            &b.commit_sha,
            &b.repo_commit,
            &b.repo_version,
            &b.repos,
            b.started,
            b.finished,
            b.duration,
            &b.result,
            &b.state,
            &b.executor,
            &b.origin,
            problems.as_str(),
            b.complete,
            &kettle,
            &place,
            &sources
        ],
    )?;
    // A head read back from the store carries no versions: the stored ones stay.
    if !b.versions.is_empty() {
        tx.exec("DELETE FROM build_versions WHERE build = ?1", vals![id])?;
        crate::build_versions::write(tx, id, &b.versions)?;
    }
    Ok(())
}

/// The stored row of a bucket and path, as a merge sees it, with its row id.
fn stored_head_tx(tx: &mut Tx<'_>, bucket: &str, path: &str) -> Result<Option<(i64, StoredBuildHead)>, DbError> {
    tx.opt(&format!("SELECT {BUILD_COLUMNS} FROM builds WHERE bucket = ?1 AND path = ?2"), vals![bucket, path], |r| {
        let (id, record, _) = build_from_row(r)?;
        Ok((id, StoredBuildHead { record, testgrid: testgrid_of_row(r)? }))
    })
}

/// The stored row of a build: the row of its bucket and path, else the one row of its
/// bucket with the same job and build id under another path (a presubmit TestGrid
/// lists by `pr-logs/directory/`, stored from GCS under `pr-logs/pull/`, or the other
/// way round). Several such rows: none is taken.
fn stored_build_tx(tx: &mut Tx<'_>, b: &BuildRecord) -> Result<Option<(i64, StoredBuildHead)>, DbError> {
    if let Some(found) = stored_head_tx(tx, &b.bucket, &b.path)? {
        return Ok(Some(found));
    }
    // Found through the job's index (`builds_by_job`): `bucket || ''` keeps SQLite from
    // taking the bucket's unique index instead, which visits every build of the bucket
    // (each new build stored cost a scan of the store: 0.1 s at 100k builds).
    let mut same = tx.rows(
        &format!(
            "SELECT {BUILD_COLUMNS} FROM builds WHERE bucket || '' = ?1 AND job = ?2 AND build_id = ?3 ORDER BY path"
        ),
        vals![&b.bucket, &b.job, &b.build_id],
        |r| {
            let (id, record, _) = build_from_row(r)?;
            Ok((id, StoredBuildHead { record, testgrid: testgrid_of_row(r)? }))
        },
    )?;
    Ok(if same.len() == 1 { same.pop() } else { None })
}

/// Writes one build merged with what is stored, in the caller's transaction: the
/// writers of this build take turns, the stored row is read, `merge` decides. Returns
/// the row id, `None` when nothing was written.
pub(crate) fn put_merging_tx(
    tx: &mut Tx<'_>,
    b: &BuildRecord,
    merge: &mut dyn FnMut(&BuildRecord, Option<&StoredBuildHead>) -> BuildWrite,
    ids: &mut HashMap<String, i64>,
    added: &mut Vec<String>,
) -> Result<Option<i64>, DbError> {
    tx.take_turns(&format!(
        "build
{}
{}",
        b.bucket, b.path
    ))?;
    tx.take_turns(&format!("build id\n{}\n{}\n{}", b.bucket, b.job, b.build_id))?;
    let stored = stored_build_tx(tx, b)?;
    match merge(b, stored.as_ref().map(|(_, h)| h)) {
        BuildWrite::Unchanged => Ok(None),
        BuildWrite::Incoming { extra_problems, testgrid } => {
            // The same build stored under another path is replaced too.
            if let Some((id, h)) = &stored {
                if h.record.path != b.path {
                    tx.exec("DELETE FROM builds WHERE id = ?1", vals![*id])?;
                }
            }
            let extras = RowExtras { extra_problems: &extra_problems, testgrid: testgrid.as_ref() };
            put_build_tx(tx, b, &extras, ids, added).map(Some)
        }
        BuildWrite::StoredWith { head, testgrid } => match stored {
            Some((id, _)) => put_build_head_tx(tx, id, &head, testgrid.as_ref()).map(|()| Some(id)),
            None => Err(DbError::Msg(format!("no stored build {} {} to keep the tests of", b.bucket, b.path))),
        },
    }
}

impl Store {
    pub(crate) fn ensure_string_ids(&mut self) -> Result<(), StoreError> {
        if self.string_ids.is_none() {
            let mut m = HashMap::new();
            self.conn
                .reader()
                .each("SELECT id, text FROM strings", &[], &mut |r| {
                    m.insert(r.string(1)?, r.i64(0)?);
                    Ok(())
                })
                .map_err(|e| self.err(e))?;
            self.string_ids = Some(m);
        }
        Ok(())
    }

    /// Brings the id → text map up to date: loads it on first use, then only the
    /// strings with ids above the highest one known (strings are never deleted).
    pub(crate) fn ensure_string_texts(&mut self) -> Result<(), StoreError> {
        let max = self.conn.reader().int("SELECT COALESCE(max(id), 0) FROM strings", &[]).map_err(|e| self.err(e))?;
        let mut texts = self.string_texts.take().unwrap_or_default();
        let known = texts.max;
        let r = if texts.is_empty() || max > known {
            self.conn.reader().each("SELECT id, text FROM strings WHERE id > ?1", vals![known], &mut |r| {
                texts.insert(r.i64(0)?, Arc::from(r.str(1)?));
                Ok(())
            })
        } else {
            Ok(0)
        };
        self.string_texts = Some(texts);
        r.map(|_| ()).map_err(|e| self.err(e))
    }

    /// Adds the texts of `ids` missing from the id → text map: strings another writer
    /// committed after strings with higher ids (PostgreSQL hands out ids before commit).
    pub(crate) fn fill_string_texts(&mut self, ids: impl IntoIterator<Item = i64>) -> Result<(), StoreError> {
        let mut texts = self.string_texts.take().unwrap_or_default();
        let missing: BTreeSet<i64> = ids.into_iter().filter(|i| !texts.contains_key(i)).collect();
        let mut r = Ok(0);
        for i in missing {
            r = self.conn.reader().each("SELECT id, text FROM strings WHERE id = ?1", vals![i], &mut |r| {
                texts.insert(r.i64(0)?, Arc::from(r.str(1)?));
                Ok(())
            });
            if r.is_err() {
                break;
            }
        }
        self.string_texts = Some(texts);
        r.map(|_| ()).map_err(|e| self.err(e))
    }

    /// Writes (or replaces) one build in one transaction.
    pub fn put_build(&mut self, b: &BuildRecord) -> Result<i64, StoreError> {
        self.ensure_string_ids()?;
        let mut ids = self.string_ids.take().unwrap_or_default();
        let mut added: Vec<String> = Vec::new();
        let result = self.conn.write(&mut |tx| {
            let r = put_build_tx(tx, b, &RowExtras::default(), &mut ids, &mut added);
            if r.is_err() {
                // Rolled back: forget the ids this attempt learnt.
                for t in added.drain(..) {
                    ids.remove(&t);
                }
            }
            r
        });
        self.string_ids = Some(ids);
        result.map_err(|e| self.err(e))
    }

    /// Writes one build merged with what is stored under its bucket and path, in one
    /// transaction: `merge` sees the stored row (if any) and decides what is written
    /// ([`BuildWrite`]). Returns the row id, `None` when nothing was written.
    pub fn put_build_merging(
        &mut self,
        b: &BuildRecord,
        merge: &mut dyn FnMut(&BuildRecord, Option<&StoredBuildHead>) -> BuildWrite,
    ) -> Result<Option<i64>, StoreError> {
        self.ensure_string_ids()?;
        let mut ids = self.string_ids.take().unwrap_or_default();
        let mut added: Vec<String> = Vec::new();
        let result = self.conn.write(&mut |tx| {
            let r = put_merging_tx(tx, b, merge, &mut ids, &mut added);
            if r.is_err() {
                for t in added.drain(..) {
                    ids.remove(&t);
                }
            }
            r
        });
        self.string_ids = Some(ids);
        result.map_err(|e| self.err(e))
    }

    /// The stored row of a bucket and path as a merge sees it (tests not read).
    pub fn build_head(&self, bucket: &str, path: &str) -> Result<Option<StoredBuildHead>, StoreError> {
        self.conn.read(&mut |tx| stored_head_tx(tx, bucket, path).map(|h| h.map(|(_, h)| h))).map_err(|e| self.err(e))
    }

    /// True when a complete copy of the build read from its own artifacts is stored
    /// (re-fetching can be skipped); a build only TestGrid has shown is not, so the
    /// build's artifacts are still read.
    pub fn has_complete_build(&self, bucket: &str, path: &str) -> Result<bool, StoreError> {
        let v = self
            .conn
            .reader()
            .opt(
                "SELECT complete FROM builds WHERE bucket = ?1 AND path = ?2 AND origin <> 'testgrid'",
                vals![bucket, path],
                |r| r.i64(0),
            )
            .map_err(|e| self.err(e))?;
        Ok(v == Some(1))
    }

    /// Every stored build (without tests), ordered by job, then start time, then id.
    pub fn builds(&self, job: Option<&str>) -> Result<Vec<BuildRecord>, StoreError> {
        self.conn
            .reader()
            .rows(
                &format!(
                    "SELECT {BUILD_COLUMNS} FROM builds WHERE CAST(?1 AS TEXT) IS NULL OR job = ?1 ORDER BY {BUILD_ORDER}"
                ),
                vals![job],
                |r| build_from_row(r).map(|(_, b, _)| b),
            )
            .map_err(|e| self.err(e))
    }

    /// A build's artifact index (paths relative to the build folder, sizes), by path.
    pub fn build_artifacts(&self, build: i64) -> Result<Vec<(String, Option<u64>)>, StoreError> {
        self.conn
            .reader()
            .rows("SELECT path, size FROM artifacts WHERE build = ?1 ORDER BY path", vals![build], |r| {
                Ok((r.string(0)?, r.opt_i64(1)?.map(|n| n.max(0) as u64)))
            })
            .map_err(|e| self.err(e))
    }

    /// The distinct job names of the stored builds, sorted.
    pub fn build_jobs(&self) -> Result<Vec<String>, StoreError> {
        self.conn
            .reader()
            .rows("SELECT DISTINCT job FROM builds ORDER BY job", &[], |r| r.string(0))
            .map_err(|e| self.err(e))
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
        let (rows, tests, mut excerpts) = self.load_job_builds(job, tests_since, full)?;
        // Strings committed by another writer after the map was read.
        let unknown: Vec<i64> = {
            let texts = self.string_texts.as_ref();
            let known = |i: &i64| texts.is_some_and(|m| m.contains_key(i));
            tests
                .iter()
                .flat_map(|t| [t.file, t.suite, Some(t.classname), Some(t.name), t.kettle_name])
                .flatten()
                .filter(|i| !known(i))
                .collect()
        };
        if !unknown.is_empty() {
            self.fill_string_texts(unknown)?;
        }
        let texts = self.string_texts.as_ref();
        let text = |i: i64| texts.and_then(|m| m.get(&i)).map(|t| t.to_string()).unwrap_or_default();
        let mut by_build: HashMap<i64, Vec<StoredTest>> = HashMap::new();
        for t in tests {
            by_build.entry(t.build).or_default().push(StoredTest {
                file: t.file.map(text).unwrap_or_default(),
                suite: t.suite.map(text).unwrap_or_default(),
                classname: text(t.classname),
                name: text(t.name),
                kettle_name: t.kettle_name.map(text),
                status: status_text(t.status).to_string(),
                duration: t.duration,
                attempt: t.attempt as u32,
                informing: t.informing,
                failure_text: t.failure_text,
            });
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

    #[allow(clippy::type_complexity)]
    fn load_job_builds(
        &self,
        job: &str,
        tests_since: Option<i64>,
        full: bool,
    ) -> Result<(Vec<(i64, BuildRecord, i64)>, Vec<RawTest>, HashMap<i64, Vec<LogExcerpt>>), StoreError> {
        self.conn
            .read(&mut |tx| {
                let rows = tx.rows(
                    &format!(
                        "SELECT {BUILD_COLUMNS} FROM builds WHERE job = ?1 ORDER BY started NULLS FIRST, build_id, path"
                    ),
                    vals![job],
                    build_from_row,
                )?;
                let tests = tx.rows(
                    if full {
                        "SELECT t.build, t.file, t.suite, t.classname, t.name, t.kettle_name, t.status, t.duration,
                            t.attempt, t.informing, t.failure_text
                         FROM builds b JOIN test_results t ON t.build = b.id
                         WHERE b.job = ?1 AND (CAST(?2 AS BIGINT) IS NULL OR b.started > ?2) ORDER BY t.build, t.seq"
                    } else {
                        "SELECT t.build, CAST(NULL AS BIGINT), CAST(NULL AS BIGINT), t.classname, t.name, t.kettle_name,
                            t.status, t.duration, t.attempt, t.informing, CAST(NULL AS TEXT)
                         FROM builds b JOIN test_results t ON t.build = b.id
                         WHERE b.job = ?1 AND (CAST(?2 AS BIGINT) IS NULL OR b.started > ?2) ORDER BY t.build, t.seq"
                    },
                    vals![job, tests_since],
                    |r| {
                        Ok(RawTest {
                            build: r.i64(0)?,
                            file: r.opt_i64(1)?,
                            suite: r.opt_i64(2)?,
                            classname: r.i64(3)?,
                            name: r.i64(4)?,
                            kettle_name: r.opt_i64(5)?,
                            status: r.i64(6)?,
                            duration: r.opt_f64(7)?,
                            attempt: r.i64(8)?,
                            informing: r.bool(9)?,
                            failure_text: r.opt_string(10)?,
                        })
                    },
                )?;
                let mut excerpts: HashMap<i64, Vec<LogExcerpt>> = HashMap::new();
                if full {
                    tx.each(
                        "SELECT e.build, e.source, e.line_start, e.line_end, e.text
                         FROM builds b JOIN build_excerpts e ON e.build = b.id
                         WHERE b.job = ?1 AND (CAST(?2 AS BIGINT) IS NULL OR b.started > ?2) ORDER BY e.build, e.seq",
                        vals![job, tests_since],
                        &mut |r| {
                            excerpts.entry(r.i64(0)?).or_default().push(excerpt_from(r, 1)?);
                            Ok(())
                        },
                    )?;
                }
                Ok((rows, tests, excerpts))
            })
            .map_err(|e| self.err(e))
    }

    /// Every stored build without its tests, as (row id, build, failed tests), ordered
    /// by job, then start time, build id and path. The row id identifies the build in
    /// [`Store::for_each_failure_text`] and [`Store::for_each_excerpt`].
    pub fn build_index(&self) -> Result<Vec<IndexedBuild>, StoreError> {
        self.conn
            .reader()
            .rows(&format!("SELECT {BUILD_COLUMNS}, failed_tests FROM builds ORDER BY {BUILD_ORDER}"), &[], |r| {
                let (id, record, _) = build_from_row(r)?;
                Ok(IndexedBuild { id, record, failed_tests: r.i64(24)?.max(0) as u32 })
            })
            .map_err(|e| self.err(e))
    }

    /// [`Store::build_index`]'s rows of one job (by its stored name), in the same order:
    /// for a caller that answers one job at a time and need not hold every build.
    pub fn job_build_index(&self, job: &str) -> Result<Vec<IndexedBuild>, StoreError> {
        self.conn
            .reader()
            .rows(
                &format!("SELECT {BUILD_COLUMNS}, failed_tests FROM builds WHERE job = ?1 ORDER BY {BUILD_ORDER}"),
                vals![job],
                |r| {
                    let (id, record, _) = build_from_row(r)?;
                    Ok(IndexedBuild { id, record, failed_tests: r.i64(24)?.max(0) as u32 })
                },
            )
            .map_err(|e| self.err(e))
    }

    /// Calls `f` with every failed test result that has a failure text, of builds
    /// started after `since` (all builds when `None`): the build's row id, the result's
    /// position, the test name and the text; by build, then position.
    pub fn for_each_failure_text(
        &mut self,
        since: Option<i64>,
        mut f: impl FnMut(i64, u32, &str, &str),
    ) -> Result<u64, StoreError> {
        // Names joined in the query (a lookup by key per row) rather than through the
        // id → text map of every interned string, which a caller streaming the
        // window's texts need not hold.
        let sql = match self.backend() {
            Backend::Sqlite => WINDOW_FAILURE_TEXTS_SQLITE,
            Backend::Postgres => {
                "SELECT t.build, t.seq, COALESCE(s.text, ''), t.failure_text
                 FROM builds b JOIN test_results t ON t.build = b.id LEFT JOIN strings s ON s.id = t.name
                 WHERE (CAST(?1 AS BIGINT) IS NULL OR b.started > ?1) AND t.status IN (1, 2) AND t.failure_text IS NOT NULL
                 ORDER BY t.build, t.seq"
            }
        };
        self.conn
            .reader()
            .each(sql, vals![since], &mut |r| {
                f(r.i64(0)?, r.i64(1)? as u32, r.str(2)?, r.opt_str(3)?.unwrap_or(""));
                Ok(())
            })
            .map_err(|e| self.err(e))
    }

    /// Calls `f` with every stored log excerpt of builds started after `since` (all
    /// when `None`): the build's row id and the excerpt; by build, then position.
    pub fn for_each_excerpt(&self, since: Option<i64>, mut f: impl FnMut(i64, &LogExcerpt)) -> Result<u64, StoreError> {
        let sql = match self.backend() {
            Backend::Sqlite => WINDOW_EXCERPTS_SQLITE,
            Backend::Postgres => {
                "SELECT e.build, e.source, e.line_start, e.line_end, e.text FROM builds b JOIN build_excerpts e
                 ON e.build = b.id WHERE CAST(?1 AS BIGINT) IS NULL OR b.started > ?1 ORDER BY e.build, e.seq"
            }
        };
        self.conn
            .reader()
            .each(sql, vals![since], &mut |r| {
                f(r.i64(0)?, &excerpt_from(r, 1)?);
                Ok(())
            })
            .map_err(|e| self.err(e))
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

    /// Whether the store holds any build (one row read, whatever the store's size;
    /// [`Store::build_counts`] counts every test result).
    pub fn has_builds(&self) -> Result<bool, StoreError> {
        self.conn
            .reader()
            .int("SELECT CASE WHEN EXISTS (SELECT 1 FROM builds) THEN 1 ELSE 0 END", &[])
            .map(|n| n != 0)
            .map_err(|e| self.err(e))
    }

    /// Counts of stored builds, test results and artifacts (for summaries and tests;
    /// counting the test results reads the whole table).
    pub fn build_counts(&self) -> Result<(u64, u64, u64), StoreError> {
        let q = |sql: &str| -> Result<u64, StoreError> {
            self.conn.reader().int(sql, &[]).map(|n| n.max(0) as u64).map_err(|e| self.err(e))
        };
        Ok((
            q("SELECT count(*) FROM builds")?,
            q("SELECT count(*) FROM test_results")?,
            q("SELECT count(*) FROM artifacts")?,
        ))
    }
}

fn excerpt_from(r: &Row<'_>, at: usize) -> Result<LogExcerpt, DbError> {
    Ok(LogExcerpt {
        source: r.string(at)?,
        line_start: r.i64(at + 1)? as u32,
        line_end: r.i64(at + 2)? as u32,
        text: r.string(at + 3)?,
    })
}

/// The window's failure texts on SQLite. Builds first (CROSS JOIN keeps the order) and
/// ordered by the builds' row id, which their scan yields, then the results' key: the
/// rows stream in order. Ordered by `t.build` instead, SQLite walks the builds by start
/// time and sorts every row, failure texts included, in memory first (over a GiB at
/// four times the k8s preset's window).
const WINDOW_FAILURE_TEXTS_SQLITE: &str = "SELECT t.build, t.seq, COALESCE(s.text, ''), t.failure_text
     FROM builds b CROSS JOIN test_results t ON t.build = b.id LEFT JOIN strings s ON s.id = t.name
     WHERE (CAST(?1 AS BIGINT) IS NULL OR b.started > ?1) AND t.status IN (1, 2) AND t.failure_text IS NOT NULL
     ORDER BY b.id, t.seq";

/// The window's log excerpts on SQLite, streamed in order as the failure texts are.
const WINDOW_EXCERPTS_SQLITE: &str = "SELECT e.build, e.source, e.line_start, e.line_end, e.text
     FROM builds b CROSS JOIN build_excerpts e ON e.build = b.id
     WHERE CAST(?1 AS BIGINT) IS NULL OR b.started > ?1 ORDER BY b.id, e.seq";

#[cfg(test)]
mod tests {
    use super::*;

    /// SQLite's plan for `sql` on a fresh store, one line per step.
    fn plan(sql: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.db");
        drop(crate::Store::open(&path).unwrap());
        let conn = rusqlite::Connection::open(&path).unwrap();
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let rows = stmt.query_map([Option::<i64>::None], |r| r.get::<_, String>(3)).unwrap();
        rows.map(Result::unwrap).collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn the_windows_texts_stream_without_a_sort() {
        for sql in [WINDOW_FAILURE_TEXTS_SQLITE, WINDOW_EXCERPTS_SQLITE] {
            let plan = plan(sql);
            assert!(!plan.contains("TEMP B-TREE"), "{plan}");
            assert!(plan.contains("SCAN b"), "{plan}");
        }
        // The order it replaces sorted every row.
        let sorted = WINDOW_FAILURE_TEXTS_SQLITE.replace("ORDER BY b.id", "ORDER BY t.build");
        assert!(plan(&sorted).contains("TEMP B-TREE"), "{}", plan(&sorted));
    }
}
