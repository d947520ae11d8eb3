//! A window's failures as clustering reads them: the builds started in the window,
//! each with only what clustering and its exports use (no tests, artifacts, excerpts or
//! other sources' facts), and every failed result that carries a failure text (build,
//! position, name, kettle name, text); never the passing results. One read transaction
//! and two queries whatever the window's size, on SQLite and PostgreSQL alike: the
//! window's builds with their count of stored results (the highest position, found
//! through the results' key), then every failed result of those builds with a text.
//! Both walk the builds in row id order (the results' key order), so the results are
//! read front to back instead of jumping about by start time; the builds are put in
//! the listing order in memory.
//!
//! What bounds the memory: each distinct failure text is held once, shared by the
//! failures repeating it; a job, bucket, kind, result and executor once per distinct
//! value; per failure a fixed 56 bytes besides its text, per build about 150 bytes
//! besides its path.

use crate::db::{vals, Exec, Row, Tx};
use crate::{Store, StoreError};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

pub use citriage_model::build::BuildRecord;

/// A build of the window as clustering uses it: its row id, the fields every listing
/// sorts by and the exports show, and how many test results are stored for it.
/// Repeated values (job, bucket, kind, result, executor) are shared.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowBuild {
    pub id: i64,
    pub bucket: Arc<str>,
    pub path: Box<str>,
    pub job: Arc<str>,
    pub build_id: Box<str>,
    /// `periodic`, `postsubmit`, `presubmit`, `batch`.
    pub kind: Arc<str>,
    pub pr: Option<u64>,
    pub started: Option<i64>,
    pub duration: Option<i64>,
    pub result: Option<Arc<str>>,
    pub executor: Option<Arc<str>>,
    pub stored_tests: u32,
}

impl WindowBuild {
    /// The job as the dashboards name it (see [`BuildRecord::dashboard_job`]).
    pub fn dashboard_job(&self) -> String {
        citriage_model::build::dashboard_job_name(&self.kind, &self.job)
    }
}

/// A failed test result with a failure text.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowFailure {
    /// Its build's index in [`Window::builds`].
    pub build: u32,
    /// The result's position in its build (as stored).
    pub seq: u32,
    pub name: Arc<str>,
    pub kettle_name: Option<Arc<str>>,
    /// The failure text, shared by every failure of the window with the same text.
    pub text: Arc<str>,
}

/// The window's builds in the order of every listing (job, start time, build id,
/// path) and their failures with a text, by build then position.
#[derive(Debug, Default)]
pub struct Window {
    pub builds: Vec<WindowBuild>,
    pub failures: Vec<WindowFailure>,
}

/// A failed result as read, before its names are looked up: (index of its build in
/// the window's order, position, name id, kettle name id, text).
type RawFailure = (u32, u32, i64, Option<i64>, Arc<str>);

impl Store {
    /// The builds started in `(since, until]` that `keep` accepts, in the order of every
    /// listing, with their failed results that have a failure text, by position.
    pub fn window_failures(
        &mut self,
        since: i64,
        until: i64,
        keep: &dyn Fn(&BuildRecord) -> bool,
    ) -> Result<Window, StoreError> {
        let (builds, mut raw) =
            self.conn.read(&mut |tx| read_window(tx, since, until, keep)).map_err(|e| self.err(e))?;
        // By build (in the window's order), then position: each key once.
        raw.sort_unstable_by_key(|r| (r.0, r.1));
        let names = self.names_of(raw.iter().flat_map(|r| std::iter::once(r.2).chain(r.3)))?;
        let name = |i: i64| names.get(&i).cloned().unwrap_or_else(|| Arc::from(""));
        let mut failures = Vec::with_capacity(raw.len());
        failures.extend(raw.drain(..).map(|(build, seq, n, k, text)| WindowFailure {
            build,
            seq,
            name: name(n),
            kettle_name: k.map(name),
            text,
        }));
        Ok(Window { builds, failures })
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
        let ids: HashSet<i64> = ids.collect();
        let unknown: Vec<i64> =
            ids.iter().copied().filter(|i| !self.string_texts.as_ref().is_some_and(|m| m.contains_key(i))).collect();
        if !unknown.is_empty() {
            self.fill_string_texts(unknown)?;
        }
        let texts = self.string_texts.as_ref();
        Ok(ids.into_iter().filter_map(|i| texts.and_then(|m| m.get(&i)).map(|t| (i, t.clone()))).collect())
    }
}

/// The row ids of the builds started in `(?1, ?2]`: as a list the engines walk in id order.
const WINDOW_IDS: &str = "SELECT id FROM builds WHERE started > ?1 AND started <= ?2";

/// The window's builds that `keep` accepts (in the order of every listing, with their
/// count of stored results: positions run from 0 without gaps, so the count is the
/// highest position plus one) and their failed results with a text, in no order.
fn read_window(
    tx: &mut Tx<'_>,
    since: i64,
    until: i64,
    keep: &dyn Fn(&BuildRecord) -> bool,
) -> Result<(Vec<WindowBuild>, Vec<RawFailure>), crate::db::DbError> {
    let mut builds = Vec::new();
    let mut shared = Shared::default();
    tx.each(
        &format!(
            "SELECT {}, (SELECT COALESCE(max(t.seq) + 1, 0) FROM test_results t WHERE t.build = builds.id)
             FROM builds WHERE id IN ({WINDOW_IDS}) ORDER BY id",
            crate::builds::BUILD_COLUMNS,
        ),
        vals![since, until],
        &mut |r| {
            let (id, b, _) = crate::builds::build_from_row(r)?;
            if keep(&b) {
                builds.push(WindowBuild {
                    id,
                    bucket: shared.get(&b.bucket),
                    path: b.path.into_boxed_str(),
                    job: shared.get(&b.job),
                    build_id: b.build_id.into_boxed_str(),
                    kind: shared.get(&b.kind),
                    pr: b.pr,
                    started: b.started,
                    duration: b.duration,
                    result: b.result.as_deref().map(|v| shared.get(v)),
                    executor: b.executor.as_deref().map(|v| shared.get(v)),
                    stored_tests: r.i64(24)?.max(0) as u32,
                });
            }
            Ok(())
        },
    )?;
    drop(shared);
    builds.shrink_to_fit();
    // The listing order (`BUILD_ORDER`: job, start with none first, build id, path), the
    // same comparison of bytes the engines make; ties keep the row id order.
    builds.sort_by(|a, b| (&a.job, a.started, &a.build_id, &a.path).cmp(&(&b.job, b.started, &b.build_id, &b.path)));
    let at: HashMap<i64, u32> = builds.iter().enumerate().map(|(i, b)| (b.id, i as u32)).collect();
    let mut texts = Shared::default();
    let mut raw = Vec::new();
    tx.each(
        &format!(
            "SELECT t.build, t.seq, t.name, t.kettle_name, t.failure_text FROM test_results t
             WHERE t.build IN ({WINDOW_IDS}) AND t.status IN (1, 2) AND t.failure_text IS NOT NULL"
        ),
        vals![since, until],
        &mut |r: &Row<'_>| {
            let Some(&i) = at.get(&r.i64(0)?) else { return Ok(()) };
            let text = texts.get(r.str(4)?);
            raw.push((i, r.i64(1)? as u32, r.i64(2)?, r.opt_i64(3)?, text));
            Ok(())
        },
    )?;
    Ok((builds, raw))
}

/// Each distinct value once, shared by the rows repeating it.
#[derive(Default)]
pub(crate) struct Shared(HashSet<Arc<str>>);

impl Shared {
    /// The shared copy of `v`, made on first sight.
    pub(crate) fn get(&mut self, v: &str) -> Arc<str> {
        if let Some(a) = self.0.get(v) {
            return a.clone();
        }
        let a: Arc<str> = Arc::from(v);
        self.0.insert(a.clone());
        a
    }
}
