//! Failure clusters in the store: each profile's clusters with their stable ids (kept
//! from run to run), and the latest clustering run of each profile: which failures
//! belong to which cluster and how many failed per day, job and test. A run replaces
//! the previous run's membership in one transaction.

use crate::db::{vals, Backend, DbError, Exec, Row, Tx, Val};
use crate::window::Shared;
use crate::{Store, StoreError};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

/// A stored failure cluster: its stable id, its latest key and what the latest run
/// that saw it found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoredCluster {
    pub stable_id: String,
    /// The normalized failure text.
    pub key: String,
    /// go.k8s.io/triage's id of the key.
    pub k8s_id: String,
    /// Failures in the cluster in the latest run that saw it.
    pub size: u64,
    pub first_seen: i64,
    pub last_seen: i64,
    /// A representative failure text.
    pub text: String,
    /// k8s triage's `commonSpans` of `text`: alternating lengths of spans shared by
    /// every member and spans that differ (in bytes), starting with a shared one.
    pub spans: Vec<usize>,
    /// The owning SIG (`testing` when unknown).
    pub owner: String,
    /// Ids of the known failure signatures the text matches.
    pub signatures: Vec<String>,
    /// Distinct tests and jobs among the members.
    pub tests: u64,
    pub jobs: u64,
    /// The as-of time of the latest run that saw the cluster (0: never recorded).
    pub run_as_of: i64,
}

/// A stored test result's name and failure text.
pub type NamedFailure = (String, Option<String>);

/// One clustering run of a profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterRun {
    pub profile: String,
    /// Failures of builds started in (`as_of` - `window_days` days, `as_of`] were clustered.
    pub as_of: i64,
    pub window_days: i64,
    pub failures: u64,
    pub clusters: u64,
}

/// One clustered failure: a failed test result of a stored build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterMember {
    pub stable_id: String,
    pub bucket: String,
    pub path: String,
    /// The test result's position in the build (as stored: skipped tests do not count).
    pub seq: u32,
}

/// Failures of one cluster on one day (days since 1970-01-01, UTC) in one job (as the
/// dashboards name it, `pr:` for presubmits) and test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterDay {
    pub stable_id: String,
    pub day: i64,
    pub job: String,
    pub test: String,
    pub failures: u64,
}

/// A recent failure of a cluster, for linking to its build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterFailure {
    pub job: String,
    pub build_id: String,
    pub bucket: String,
    pub path: String,
    pub kind: String,
    pub pr: Option<u64>,
    pub started: Option<i64>,
    pub test: String,
    pub failure_text: Option<String>,
}

/// A sub-pattern of a cluster in its profile's latest run, with one failure as evidence.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StoredSubPattern {
    pub stable_id: String,
    /// `template`, `job-family` or `signature`.
    pub kind: String,
    pub label: String,
    pub failures: u64,
    pub first_seen: i64,
    pub last_seen: i64,
    pub job: String,
    pub build: String,
    pub test: String,
    /// First line of the evidence failure's text.
    pub excerpt: String,
}

/// A clustered failure named by its build's row id and position, with its cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemberAt<'a> {
    pub stable_id: &'a str,
    pub build: i64,
    pub seq: u32,
}

/// The stable id a clustered failure was first given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirstId {
    pub bucket: String,
    pub path: String,
    pub seq: u32,
    pub stable_id: String,
}

fn cluster_from_row(r: &Row<'_>) -> Result<StoredCluster, DbError> {
    Ok(StoredCluster {
        stable_id: r.string(0)?,
        key: r.string(1)?,
        k8s_id: r.string(2)?,
        size: r.i64(3)?.max(0) as u64,
        first_seen: r.i64(4)?,
        last_seen: r.i64(5)?,
        text: r.string(6)?,
        spans: serde_json::from_str(r.str(7)?).unwrap_or_default(),
        owner: r.string(8)?,
        signatures: serde_json::from_str(r.str(9)?).unwrap_or_default(),
        tests: r.i64(10)?.max(0) as u64,
        jobs: r.i64(11)?.max(0) as u64,
        run_as_of: r.i64(12)?,
    })
}

const CLUSTER_COLUMNS: &str =
    "stable_id, key, k8s_id, size, first_seen, last_seen, text, spans, owner, signatures, tests, jobs, run_as_of";

impl Store {
    /// The clusters of a normalization profile, by stable id.
    pub fn clusters(&self, profile: &str) -> Result<Vec<StoredCluster>, StoreError> {
        self.conn
            .reader()
            .rows(
                &format!("SELECT {CLUSTER_COLUMNS} FROM clusters WHERE profile = ?1 ORDER BY stable_id"),
                vals![profile],
                cluster_from_row,
            )
            .map_err(|e| self.err(e))
    }

    /// One cluster of a profile.
    pub fn cluster(&self, profile: &str, stable_id: &str) -> Result<Option<StoredCluster>, StoreError> {
        self.conn
            .reader()
            .opt(
                &format!("SELECT {CLUSTER_COLUMNS} FROM clusters WHERE profile = ?1 AND stable_id = ?2"),
                vals![profile, stable_id],
                cluster_from_row,
            )
            .map_err(|e| self.err(e))
    }

    /// Records clusters in one transaction: a stable id keeps its first sighting and
    /// takes the current key, size, text and last sighting.
    pub fn upsert_clusters(&mut self, profile: &str, rows: &[StoredCluster]) -> Result<(), StoreError> {
        self.conn.write(&mut |tx| upsert(tx, profile, rows)).map_err(|e| self.err(e))
    }

    /// Records a clustering run in one transaction: its clusters (as
    /// [`Store::upsert_clusters`]), and, replacing the profile's previous run, which
    /// failures belong to which cluster and the daily counts (a member listed twice is
    /// stored once; counts of the same cluster, day, job and test add up). Members
    /// whose build is not stored are skipped; their count is returned. Runs of one
    /// profile by several writers take turns.
    pub fn record_cluster_run(
        &mut self,
        run: &ClusterRun,
        clusters: &[StoredCluster],
        members: &[ClusterMember],
        daily: &[ClusterDay],
    ) -> Result<u64, StoreError> {
        let ids: HashMap<(String, String), i64> = self
            .conn
            .reader()
            .rows("SELECT bucket, path, id FROM builds", &[], |r| Ok(((r.string(0)?, r.string(1)?), r.i64(2)?)))
            .map_err(|e| self.err(e))?
            .into_iter()
            .collect();
        let mut missing = 0u64;
        let mut at = Vec::with_capacity(members.len());
        for m in members {
            match ids.get(&(m.bucket.clone(), m.path.clone())) {
                Some(id) => at.push(MemberAt { stable_id: &m.stable_id, build: *id, seq: m.seq }),
                None => missing += 1,
            }
        }
        self.record_cluster_run_at(run, clusters, &at, daily)?;
        Ok(missing)
    }

    /// [`Store::record_cluster_run`] with each member named by its build's row id (as
    /// [`Store::window_failures`] reads them), the form clustering writes: the
    /// membership is written as the difference from the previous run's (rows gone
    /// deleted, rows new inserted), and only failures without a first stable id get
    /// one, so a run over a window that moved by a day writes about a day of rows.
    pub fn record_cluster_run_at(
        &mut self,
        run: &ClusterRun,
        clusters: &[StoredCluster],
        members: &[MemberAt<'_>],
        daily: &[ClusterDay],
    ) -> Result<(), StoreError> {
        let mut counts: BTreeMap<(&str, i64, &str, &str), u64> = BTreeMap::new();
        for d in daily {
            *counts.entry((d.stable_id.as_str(), d.day, d.job.as_str(), d.test.as_str())).or_default() += d.failures;
        }
        let rows: BTreeSet<(&str, i64, u32)> = members.iter().map(|m| (m.stable_id, m.build, m.seq)).collect();
        // The first stable id each failure is given stays (a failure in two
        // clusters of one run keeps the first listed).
        let mut seen: HashSet<(i64, u32)> = HashSet::with_capacity(members.len());
        let first: Vec<(i64, u32, &str)> =
            members.iter().filter(|m| seen.insert((m.build, m.seq))).map(|m| (m.build, m.seq, m.stable_id)).collect();
        drop(seen);
        self.conn
            .write(&mut |tx| {
                tx.take_turns(&format!("cluster run\n{}", run.profile))?;
                upsert(tx, &run.profile, clusters)?;
                write_members(tx, &run.profile, &rows)?;
                keep_first_ids(tx, &run.profile, &first)?;
                tx.exec("DELETE FROM cluster_daily WHERE profile = ?1", vals![&run.profile])?;
                if !counts.is_empty() {
                    tx.bulk("cluster_daily", &["profile", "stable_id", "day", "job", "test", "failures"], &mut |b| {
                        for ((sid, day, job, test), n) in &counts {
                            b.row(vals![&run.profile, *sid, *day, *job, *test, *n as i64])?;
                        }
                        Ok(())
                    })?;
                }
                tx.exec(
                    "INSERT INTO cluster_runs (profile, as_of, window_days, failures, clusters) VALUES (?1, ?2, ?3, ?4, ?5)
                     ON CONFLICT (profile) DO UPDATE SET as_of = excluded.as_of, window_days = excluded.window_days,
                        failures = excluded.failures, clusters = excluded.clusters",
                    vals![&run.profile, run.as_of, run.window_days, run.failures as i64, run.clusters as i64],
                )?;
                Ok(())
            })
            .map_err(|e| self.err(e))
    }

    /// The latest clustering run of a profile.
    pub fn cluster_run(&self, profile: &str) -> Result<Option<ClusterRun>, StoreError> {
        self.conn
            .reader()
            .opt(
                "SELECT profile, as_of, window_days, failures, clusters FROM cluster_runs WHERE profile = ?1",
                vals![profile],
                |r| {
                    Ok(ClusterRun {
                        profile: r.string(0)?,
                        as_of: r.i64(1)?,
                        window_days: r.i64(2)?,
                        failures: r.i64(3)?.max(0) as u64,
                        clusters: r.i64(4)?.max(0) as u64,
                    })
                },
            )
            .map_err(|e| self.err(e))
    }

    /// The daily counts of a profile's latest run, ordered by cluster, day, job, test.
    pub fn cluster_daily(&self, profile: &str) -> Result<Vec<ClusterDay>, StoreError> {
        self.conn
            .reader()
            .rows(
                "SELECT stable_id, day, job, test, failures FROM cluster_daily WHERE profile = ?1
                 ORDER BY stable_id, day, job, test",
                vals![profile],
                |r| {
                    Ok(ClusterDay {
                        stable_id: r.string(0)?,
                        day: r.i64(1)?,
                        job: r.string(2)?,
                        test: r.string(3)?,
                        failures: r.i64(4)?.max(0) as u64,
                    })
                },
            )
            .map_err(|e| self.err(e))
    }

    /// A cluster's most recent failures in its profile's latest run (newest build
    /// first, ties by job, build and test position), at most `limit`.
    pub fn cluster_failures(
        &self,
        profile: &str,
        stable_id: &str,
        limit: usize,
    ) -> Result<Vec<ClusterFailure>, StoreError> {
        self.conn
            .reader()
            .rows(
                "SELECT b.job, b.build_id, b.bucket, b.path, b.kind, b.pr, b.started, s.text, t.failure_text
                 FROM (SELECT m.build, m.seq FROM cluster_members m JOIN builds b ON b.id = m.build
                       WHERE m.profile = ?1 AND m.stable_id = ?2
                       ORDER BY b.started DESC NULLS LAST, b.job, b.build_id, m.seq LIMIT ?3) x
                 JOIN builds b ON b.id = x.build
                 JOIN test_results t ON t.build = x.build AND t.seq = x.seq
                 JOIN strings s ON s.id = t.name
                 ORDER BY b.started DESC NULLS LAST, b.job, b.build_id, x.seq",
                vals![profile, stable_id, limit as i64],
                |r| {
                    Ok(ClusterFailure {
                        job: r.string(0)?,
                        build_id: r.string(1)?,
                        bucket: r.string(2)?,
                        path: r.string(3)?,
                        kind: r.string(4)?,
                        pr: r.opt_i64(5)?.map(|p| p as u64),
                        started: r.opt_i64(6)?,
                        test: r.string(7)?,
                        failure_text: r.opt_string(8)?,
                    })
                },
            )
            .map_err(|e| self.err(e))
    }
}

impl Store {
    /// The stable id every failure clustered under `profile` was first given.
    pub fn cluster_first_ids(&self, profile: &str) -> Result<Vec<FirstId>, StoreError> {
        self.conn
            .reader()
            .rows(
                "SELECT b.bucket, b.path, f.seq, f.stable_id FROM cluster_failure_ids f JOIN builds b ON b.id = f.build
                 WHERE f.profile = ?1 ORDER BY b.bucket, b.path, f.seq",
                vals![profile],
                |r| {
                    Ok(FirstId {
                        bucket: r.string(0)?,
                        path: r.string(1)?,
                        seq: r.i64(2)? as u32,
                        stable_id: r.string(3)?,
                    })
                },
            )
            .map_err(|e| self.err(e))
    }

    /// The stable id every failure clustered under `profile` was first given, by the
    /// failure's build row id and position: (build, position, stable id), in that order;
    /// each stable id held once, shared by its failures.
    pub fn cluster_first_ids_at(&self, profile: &str) -> Result<Vec<(i64, u32, Arc<str>)>, StoreError> {
        let mut ids = Shared::default();
        let mut out = Vec::new();
        self.conn
            .reader()
            .each(
                "SELECT build, seq, stable_id FROM cluster_failure_ids WHERE profile = ?1 ORDER BY build, seq",
                vals![profile],
                &mut |r| {
                    out.push((r.i64(0)?, r.i64(1)? as u32, ids.get(r.str(2)?)));
                    Ok(())
                },
            )
            .map_err(|e| self.err(e))?;
        Ok(out)
    }

    /// Replaces the sub-patterns of a profile's latest run, in one transaction (of rows
    /// with the same cluster, kind and label, the last is kept).
    pub fn record_cluster_subpatterns(&mut self, profile: &str, rows: &[StoredSubPattern]) -> Result<(), StoreError> {
        let mut last: BTreeMap<(&str, &str, &str), &StoredSubPattern> = BTreeMap::new();
        for r in rows {
            last.insert((r.stable_id.as_str(), r.kind.as_str(), r.label.as_str()), r);
        }
        self.conn
            .write(&mut |tx| {
                tx.exec("DELETE FROM cluster_subpatterns WHERE profile = ?1", vals![profile])?;
                if last.is_empty() {
                    return Ok(());
                }
                tx.bulk(
                    "cluster_subpatterns",
                    &[
                        "profile",
                        "stable_id",
                        "kind",
                        "label",
                        "failures",
                        "first_seen",
                        "last_seen",
                        "job",
                        "build",
                        "test",
                        "excerpt",
                    ],
                    &mut |b| {
                        for r in last.values() {
                            b.row(vals![
                                profile,
                                &r.stable_id,
                                &r.kind,
                                &r.label,
                                r.failures as i64,
                                r.first_seen,
                                r.last_seen,
                                &r.job,
                                &r.build,
                                &r.test,
                                &r.excerpt
                            ])?;
                        }
                        Ok(())
                    },
                )?;
                Ok(())
            })
            .map_err(|e| self.err(e))
    }

    /// The sub-patterns of a cluster in its profile's latest run: by kind, most failures
    /// first, then label.
    pub fn cluster_subpatterns(&self, profile: &str, stable_id: &str) -> Result<Vec<StoredSubPattern>, StoreError> {
        self.conn
            .reader()
            .rows(
                "SELECT stable_id, kind, label, failures, first_seen, last_seen, job, build, test, excerpt
                 FROM cluster_subpatterns WHERE profile = ?1 AND stable_id = ?2
                 ORDER BY kind DESC, failures DESC, label",
                vals![profile, stable_id],
                |r| {
                    Ok(StoredSubPattern {
                        stable_id: r.string(0)?,
                        kind: r.string(1)?,
                        label: r.string(2)?,
                        failures: r.i64(3)?.max(0) as u64,
                        first_seen: r.i64(4)?,
                        last_seen: r.i64(5)?,
                        job: r.string(6)?,
                        build: r.string(7)?,
                        test: r.string(8)?,
                        excerpt: r.string(9)?,
                    })
                },
            )
            .map_err(|e| self.err(e))
    }

    /// The clusters a build's failures belong to in each profile's latest run: (profile,
    /// stable id, test position), by profile then position.
    pub fn build_cluster_members(&self, build: i64) -> Result<Vec<(String, String, u32)>, StoreError> {
        self.conn
            .reader()
            .rows(
                "SELECT profile, stable_id, seq FROM cluster_members WHERE build = ?1 ORDER BY profile, seq, stable_id",
                vals![build],
                |r| Ok((r.string(0)?, r.string(1)?, r.i64(2)? as u32)),
            )
            .map_err(|e| self.err(e))
    }

    /// The (build row id, test position) of every member of a cluster in its profile's
    /// latest run, by build then position.
    pub fn cluster_member_rows(&self, profile: &str, stable_id: &str) -> Result<Vec<(i64, u32)>, StoreError> {
        self.conn
            .reader()
            .rows(
                "SELECT build, seq FROM cluster_members WHERE profile = ?1 AND stable_id = ?2 ORDER BY build, seq",
                vals![profile, stable_id],
                |r| Ok((r.i64(0)?, r.i64(1)? as u32)),
            )
            .map_err(|e| self.err(e))
    }

    /// The test name and failure text of stored test results, by (build row id, position),
    /// in the order asked; `None` for a result that is not stored.
    pub fn test_results_at(&self, at: &[(i64, u32)]) -> Result<Vec<Option<NamedFailure>>, StoreError> {
        let mut db = self.conn.reader();
        at.iter()
            .map(|(b, seq)| {
                db.opt(
                    "SELECT s.text, t.failure_text FROM test_results t JOIN strings s ON s.id = t.name
                     WHERE t.build = ?1 AND t.seq = ?2",
                    vals![*b, *seq],
                    |r| Ok((r.string(0)?, r.opt_string(1)?)),
                )
                .map_err(|e| self.err(e))
            })
            .collect()
    }
}

fn upsert(tx: &mut Tx<'_>, profile: &str, rows: &[StoredCluster]) -> Result<(), DbError> {
    for c in rows {
        tx.exec(
            "INSERT INTO clusters (profile, stable_id, key, k8s_id, size, first_seen, last_seen, text, spans, owner,
                signatures, tests, jobs, run_as_of)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
             ON CONFLICT (profile, stable_id) DO UPDATE SET key = excluded.key, k8s_id = excluded.k8s_id,
                size = excluded.size,
                first_seen = CASE WHEN excluded.first_seen < clusters.first_seen
                    THEN excluded.first_seen ELSE clusters.first_seen END,
                last_seen = CASE WHEN excluded.last_seen > clusters.last_seen
                    THEN excluded.last_seen ELSE clusters.last_seen END,
                text = excluded.text, spans = excluded.spans,
                owner = excluded.owner, signatures = excluded.signatures, tests = excluded.tests, jobs = excluded.jobs,
                run_as_of = CASE WHEN excluded.run_as_of > clusters.run_as_of
                    THEN excluded.run_as_of ELSE clusters.run_as_of END",
            vals![
                profile,
                &c.stable_id,
                &c.key,
                &c.k8s_id,
                c.size as i64,
                c.first_seen,
                c.last_seen,
                &c.text,
                serde_json::to_string(&c.spans).unwrap_or_else(|_| "[]".into()).as_str(),
                &c.owner,
                serde_json::to_string(&c.signatures).unwrap_or_else(|_| "[]".into()).as_str(),
                c.tests as i64,
                c.jobs as i64,
                c.run_as_of
            ],
        )?;
    }
    Ok(())
}

/// Records the first stable id of failures that have none yet; those that have one
/// keep it (only the failures without one are written). SQLite: one prepared insert per
/// failure; PostgreSQL: arrays of 10,000 failures per statement.
fn keep_first_ids(tx: &mut Tx<'_>, profile: &str, first: &[(i64, u32, &str)]) -> Result<(), DbError> {
    let mut known: HashSet<(i64, u32)> = HashSet::new();
    tx.each("SELECT build, seq FROM cluster_failure_ids WHERE profile = ?1", vals![profile], &mut |r| {
        known.insert((r.i64(0)?, r.i64(1)? as u32));
        Ok(())
    })?;
    let mut fresh: Vec<(i64, u32, &str)> = first.iter().filter(|f| !known.contains(&(f.0, f.1))).copied().collect();
    drop(known);
    // In key order: each insert lands after the previous one (each key is listed once).
    fresh.sort_unstable();
    let first = &fresh;
    match tx.backend() {
        Backend::Sqlite => {
            for (build, seq, sid) in first {
                tx.exec(
                    "INSERT INTO cluster_failure_ids (profile, build, seq, stable_id) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT DO NOTHING",
                    vals![profile, *build, *seq, *sid],
                )?;
            }
        }
        Backend::Postgres => {
            for chunk in first.chunks(10_000) {
                let builds: Vec<i64> = chunk.iter().map(|c| c.0).collect();
                let seqs: Vec<i64> = chunk.iter().map(|c| i64::from(c.1)).collect();
                let sids: Vec<&str> = chunk.iter().map(|c| c.2).collect();
                tx.exec(
                    "INSERT INTO cluster_failure_ids (profile, build, seq, stable_id)
                     SELECT ?1, b, s, i FROM unnest(?2::bigint[], ?3::bigint[], ?4::text[]) AS u (b, s, i)
                     ON CONFLICT DO NOTHING",
                    &[Val::Text(profile), Val::Ints(&builds), Val::Ints(&seqs), Val::Texts(&sids)],
                )?;
            }
        }
    }
    Ok(())
}

/// Replaces a profile's membership rows with `rows`, writing only the difference: the
/// previous rows not in `rows` deleted, the rows not there before inserted (when most
/// rows go, all are deleted and `rows` inserted).
fn write_members(tx: &mut Tx<'_>, profile: &str, rows: &BTreeSet<(&str, i64, u32)>) -> Result<(), DbError> {
    // Stable ids interned to small numbers, so the previous rows are compact.
    let mut sids: HashMap<String, u32> = HashMap::new();
    let mut old: HashSet<(u32, i64, u32)> = HashSet::new();
    tx.each("SELECT stable_id, build, seq FROM cluster_members WHERE profile = ?1", vals![profile], &mut |r| {
        let sid = r.str(0)?;
        let n = sids.len() as u32;
        let k = match sids.get(sid) {
            Some(k) => *k,
            None => *sids.entry(sid.to_string()).or_insert(n),
        };
        old.insert((k, r.i64(1)?, r.i64(2)? as u32));
        Ok(())
    })?;
    let key = |(sid, b, s): &(&str, i64, u32)| sids.get(*sid).map(|k| (*k, *b, *s));
    let kept = rows.iter().filter(|r| key(r).is_some_and(|k| old.contains(&k))).count();
    let gone = old.len() - kept;
    let insert: Vec<&(&str, i64, u32)> = if gone * 2 > old.len() {
        tx.exec("DELETE FROM cluster_members WHERE profile = ?1", vals![profile])?;
        rows.iter().collect()
    } else {
        let new: HashSet<(u32, i64, u32)> = rows.iter().filter_map(key).collect();
        let names: Vec<&str> = {
            let mut v = vec![""; sids.len()];
            for (s, k) in &sids {
                v[*k as usize] = s.as_str();
            }
            v
        };
        let mut delete: Vec<(&str, i64, u32)> =
            old.iter().filter(|k| !new.contains(k)).map(|(k, b, s)| (names[*k as usize], *b, *s)).collect();
        delete.sort_unstable();
        delete_members(tx, profile, &delete)?;
        rows.iter().filter(|r| !key(r).is_some_and(|k| old.contains(&k))).collect()
    };
    if !insert.is_empty() {
        tx.bulk("cluster_members", &["profile", "stable_id", "build", "seq"], &mut |b| {
            for (sid, build, seq) in &insert {
                b.row(vals![profile, *sid, *build, *seq])?;
            }
            Ok(())
        })?;
    }
    Ok(())
}

/// Deletes these membership rows of a profile. SQLite: one prepared delete per row;
/// PostgreSQL: arrays of 10,000 rows per statement.
fn delete_members(tx: &mut Tx<'_>, profile: &str, rows: &[(&str, i64, u32)]) -> Result<(), DbError> {
    match tx.backend() {
        Backend::Sqlite => {
            for (sid, build, seq) in rows {
                tx.exec(
                    "DELETE FROM cluster_members WHERE profile = ?1 AND stable_id = ?2 AND build = ?3 AND seq = ?4",
                    vals![profile, *sid, *build, *seq],
                )?;
            }
        }
        Backend::Postgres => {
            for chunk in rows.chunks(10_000) {
                let sids: Vec<&str> = chunk.iter().map(|c| c.0).collect();
                let builds: Vec<i64> = chunk.iter().map(|c| c.1).collect();
                let seqs: Vec<i64> = chunk.iter().map(|c| i64::from(c.2)).collect();
                tx.exec(
                    "DELETE FROM cluster_members m USING unnest(?2::text[], ?3::bigint[], ?4::bigint[]) AS u (i, b, s)
                     WHERE m.profile = ?1 AND m.stable_id = u.i AND m.build = u.b AND m.seq = u.s",
                    &[Val::Text(profile), Val::Texts(&sids), Val::Ints(&builds), Val::Ints(&seqs)],
                )?;
            }
        }
    }
    Ok(())
}
