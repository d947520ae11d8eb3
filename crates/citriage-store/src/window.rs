//! A window's failures as clustering reads them: the builds started in the window,
//! each with only its failed results that carry a failure text (position, name,
//! kettle name, text) and its count of stored results; never the passing results, the
//! artifacts or the log excerpts. One read transaction, one prepared statement per
//! query shape: on SQLite one lookup per build through the failed-results index; on
//! PostgreSQL the builds in batches (one round trip per batch, not per build).

use crate::db::{vals, Backend, DbError, Exec, Row, Tx, Val};
use crate::{Store, StoreError};
use std::collections::HashMap;
use std::sync::Arc;

pub use citriage_model::build::BuildRecord;

/// A build of the window: its row id, the build (without tests, artifacts or
/// excerpts) and how many test results are stored for it.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowBuild {
    pub id: i64,
    pub record: BuildRecord,
    pub stored_tests: u32,
}

/// A failed test result with a failure text.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowFailure {
    /// The result's position in its build (as stored).
    pub seq: u32,
    pub name: Arc<str>,
    pub kettle_name: Option<Arc<str>>,
    pub text: String,
}

/// Builds handed to PostgreSQL per query.
const PG_BATCH: usize = 500;

/// A failed result as read, before its names are looked up.
struct RawFailure {
    build: i64,
    seq: u32,
    name: i64,
    kettle_name: Option<i64>,
    text: String,
}

fn raw_failure(r: &Row<'_>) -> Result<RawFailure, DbError> {
    Ok(RawFailure {
        build: r.i64(0)?,
        seq: r.i64(1)? as u32,
        name: r.i64(2)?,
        kettle_name: r.opt_i64(3)?,
        text: r.string(4)?,
    })
}

impl Store {
    /// Calls `f` with each build started in `(since, until]` that `keep` accepts, in
    /// the order of every listing (job, start time, build id, path), with its failed
    /// results that have a failure text, by position.
    pub fn for_each_window_build(
        &mut self,
        since: i64,
        until: i64,
        keep: &dyn Fn(&BuildRecord) -> bool,
        f: &mut dyn FnMut(WindowBuild, Vec<WindowFailure>),
    ) -> Result<(), StoreError> {
        let builds: Vec<(i64, BuildRecord)> = self
            .conn
            .reader()
            .rows(
                &format!(
                    "SELECT {} FROM builds WHERE started > ?1 AND started <= ?2 ORDER BY {}",
                    crate::builds::BUILD_COLUMNS,
                    crate::builds::BUILD_ORDER
                ),
                vals![since, until],
                |r| crate::builds::build_from_row(r).map(|(id, b, _)| (id, b)),
            )
            .map_err(|e| self.err(e))?
            .into_iter()
            .filter(|(_, b)| keep(b))
            .collect();
        // Builds per read transaction, and per query.
        let (part_size, chunk) = match self.backend() {
            Backend::Sqlite => (256, 1),
            Backend::Postgres => (4 * PG_BATCH, PG_BATCH),
        };
        for part in builds.chunks(part_size) {
            let ids: Vec<i64> = part.iter().map(|(id, _)| *id).collect();
            let (raw, counts) = self.conn.read(&mut |tx| read_failures(tx, &ids, chunk)).map_err(|e| self.err(e))?;
            let names = self.names_of(raw.iter().flat_map(|r| std::iter::once(r.name).chain(r.kettle_name)))?;
            let name = |i: i64| names.get(&i).cloned().unwrap_or_else(|| Arc::from(""));
            let mut by_build: HashMap<i64, Vec<WindowFailure>> = HashMap::new();
            for r in raw {
                by_build.entry(r.build).or_default().push(WindowFailure {
                    seq: r.seq,
                    name: name(r.name),
                    kettle_name: r.kettle_name.map(name),
                    text: r.text,
                });
            }
            for (id, record) in part {
                let failures = by_build.remove(id).unwrap_or_default();
                let stored_tests = counts.get(id).copied().unwrap_or(0);
                f(WindowBuild { id: *id, record: record.clone(), stored_tests }, failures);
            }
        }
        Ok(())
    }

    /// The start times of the stored builds that have one, in the order of every build
    /// listing, and the number of stored builds (what a default as-of is computed from,
    /// without reading the builds).
    pub fn build_starts(&self) -> Result<(Vec<i64>, u64), StoreError> {
        let mut n = 0u64;
        let mut starts = Vec::new();
        self.conn
            .reader()
            .each(&format!("SELECT started FROM builds ORDER BY {}", crate::builds::BUILD_ORDER), &[], &mut |r| {
                n += 1;
                if let Some(s) = r.opt_i64(0)? {
                    starts.push(s);
                }
                Ok(())
            })
            .map_err(|e| self.err(e))?;
        Ok((starts, n))
    }

    /// The texts of interned strings, from the id → text map (brought up to date).
    fn names_of(&mut self, ids: impl Iterator<Item = i64>) -> Result<HashMap<i64, Arc<str>>, StoreError> {
        self.ensure_string_texts()?;
        let ids: Vec<i64> = ids.collect();
        let unknown: Vec<i64> =
            ids.iter().copied().filter(|i| !self.string_texts.as_ref().is_some_and(|m| m.contains_key(i))).collect();
        if !unknown.is_empty() {
            self.fill_string_texts(unknown)?;
        }
        let texts = self.string_texts.as_ref();
        Ok(ids.into_iter().filter_map(|i| texts.and_then(|m| m.get(&i)).map(|t| (i, t.clone()))).collect())
    }
}

/// The failed results with a text of these builds (by build, then position) and each
/// build's count of stored results (positions run from 0 without gaps, so the count
/// is the highest position plus one).
#[allow(clippy::type_complexity)]
fn read_failures(tx: &mut Tx<'_>, ids: &[i64], chunk: usize) -> Result<(Vec<RawFailure>, HashMap<i64, u32>), DbError> {
    let mut raw = Vec::new();
    let mut counts = HashMap::with_capacity(ids.len());
    match tx.backend() {
        Backend::Sqlite => {
            for &id in ids {
                tx.each(
                    "SELECT build, seq, name, kettle_name, failure_text FROM test_results
                     WHERE build = ?1 AND status IN (1, 2) AND failure_text IS NOT NULL ORDER BY seq",
                    vals![id],
                    &mut |r| {
                        raw.push(raw_failure(r)?);
                        Ok(())
                    },
                )?;
                let n = tx.int("SELECT COALESCE(max(seq) + 1, 0) FROM test_results WHERE build = ?1", vals![id])?;
                counts.insert(id, n.max(0) as u32);
            }
        }
        Backend::Postgres => {
            for part in ids.chunks(chunk.max(1)) {
                tx.each(
                    "SELECT build, seq, name, kettle_name, failure_text FROM test_results
                     WHERE build = ANY(?1::bigint[]) AND status IN (1, 2) AND failure_text IS NOT NULL
                     ORDER BY build, seq",
                    &[Val::Ints(part)],
                    &mut |r| {
                        raw.push(raw_failure(r)?);
                        Ok(())
                    },
                )?;
                tx.each(
                    "SELECT build, max(seq) + 1 FROM test_results WHERE build = ANY(?1::bigint[]) GROUP BY build",
                    &[Val::Ints(part)],
                    &mut |r| {
                        counts.insert(r.i64(0)?, r.i64(1)?.max(0) as u32);
                        Ok(())
                    },
                )?;
            }
        }
    }
    Ok((raw, counts))
}
