//! Failure clusters in the store: each profile's clusters with their stable ids (kept
//! from run to run), and the latest clustering run of each profile: which failures
//! belong to which cluster and how many failed per day, job and test. A run replaces
//! the previous run's membership in one transaction.

use crate::{Store, StoreError};
use rusqlite::{params, OptionalExtension};
use std::collections::HashMap;

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

/// The stable id a clustered failure was first given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirstId {
    pub bucket: String,
    pub path: String,
    pub seq: u32,
    pub stable_id: String,
}

fn cluster_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredCluster> {
    let spans: String = r.get(7)?;
    let sigs: String = r.get(9)?;
    Ok(StoredCluster {
        stable_id: r.get(0)?,
        key: r.get(1)?,
        k8s_id: r.get(2)?,
        size: r.get::<_, i64>(3)?.max(0) as u64,
        first_seen: r.get(4)?,
        last_seen: r.get(5)?,
        text: r.get(6)?,
        spans: serde_json::from_str(&spans).unwrap_or_default(),
        owner: r.get(8)?,
        signatures: serde_json::from_str(&sigs).unwrap_or_default(),
        tests: r.get::<_, i64>(10)?.max(0) as u64,
        jobs: r.get::<_, i64>(11)?.max(0) as u64,
        run_as_of: r.get(12)?,
    })
}

const CLUSTER_COLUMNS: &str =
    "stable_id, key, k8s_id, size, first_seen, last_seen, text, spans, owner, signatures, tests, jobs, run_as_of";

impl Store {
    /// The clusters of a normalization profile, by stable id.
    pub fn clusters(&self, profile: &str) -> Result<Vec<StoredCluster>, StoreError> {
        let mut st = self
            .conn
            .prepare(&format!("SELECT {CLUSTER_COLUMNS} FROM clusters WHERE profile = ?1 ORDER BY stable_id"))
            .map_err(|e| self.err(e))?;
        let rows = st.query_map(params![profile], cluster_from_row).map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    /// One cluster of a profile.
    pub fn cluster(&self, profile: &str, stable_id: &str) -> Result<Option<StoredCluster>, StoreError> {
        self.conn
            .query_row(
                &format!("SELECT {CLUSTER_COLUMNS} FROM clusters WHERE profile = ?1 AND stable_id = ?2"),
                params![profile, stable_id],
                cluster_from_row,
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Records clusters in one transaction: a stable id keeps its first sighting and
    /// takes the current key, size, text and last sighting.
    pub fn upsert_clusters(&mut self, profile: &str, rows: &[StoredCluster]) -> Result<(), StoreError> {
        let path = self.path.clone();
        let sql = |source| StoreError::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        upsert(&tx, profile, rows).map_err(sql)?;
        tx.commit().map_err(sql)
    }

    /// Records a clustering run in one transaction: its clusters (as
    /// [`Store::upsert_clusters`]), and, replacing the profile's previous run, which
    /// failures belong to which cluster and the daily counts. Members whose build is
    /// not stored are skipped; their count is returned.
    pub fn record_cluster_run(
        &mut self,
        run: &ClusterRun,
        clusters: &[StoredCluster],
        members: &[ClusterMember],
        daily: &[ClusterDay],
    ) -> Result<u64, StoreError> {
        let path = self.path.clone();
        let sql = |source| StoreError::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        upsert(&tx, &run.profile, clusters).map_err(sql)?;
        let mut ids: HashMap<(String, String), i64> = HashMap::new();
        {
            let mut st = tx.prepare("SELECT bucket, path, id FROM builds").map_err(sql)?;
            let rows = st
                .query_map([], |r| Ok(((r.get::<_, String>(0)?, r.get::<_, String>(1)?), r.get::<_, i64>(2)?)))
                .map_err(sql)?;
            for r in rows {
                let (k, v) = r.map_err(sql)?;
                ids.insert(k, v);
            }
        }
        tx.execute("DELETE FROM cluster_members WHERE profile = ?1", params![run.profile]).map_err(sql)?;
        tx.execute("DELETE FROM cluster_daily WHERE profile = ?1", params![run.profile]).map_err(sql)?;
        let mut missing = 0u64;
        {
            let mut st = tx
                .prepare(
                    "INSERT OR IGNORE INTO cluster_members (profile, stable_id, build, seq) VALUES (?1, ?2, ?3, ?4)",
                )
                .map_err(sql)?;
            let mut first = tx
                .prepare(
                    "INSERT OR IGNORE INTO cluster_failure_ids (profile, build, seq, stable_id) VALUES (?1, ?2, ?3, ?4)",
                )
                .map_err(sql)?;
            for m in members {
                match ids.get(&(m.bucket.clone(), m.path.clone())) {
                    Some(id) => {
                        st.execute(params![run.profile, m.stable_id, id, m.seq]).map_err(sql)?;
                        first.execute(params![run.profile, id, m.seq, m.stable_id]).map_err(sql)?;
                    }
                    None => missing += 1,
                }
            }
            let mut st = tx
                .prepare(
                    "INSERT INTO cluster_daily (profile, stable_id, day, job, test, failures) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT (profile, stable_id, day, job, test) DO UPDATE SET failures = failures + excluded.failures",
                )
                .map_err(sql)?;
            for d in daily {
                st.execute(params![run.profile, d.stable_id, d.day, d.job, d.test, d.failures as i64]).map_err(sql)?;
            }
        }
        tx.execute(
            "INSERT OR REPLACE INTO cluster_runs (profile, as_of, window_days, failures, clusters) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![run.profile, run.as_of, run.window_days, run.failures as i64, run.clusters as i64],
        )
        .map_err(sql)?;
        tx.commit().map_err(sql)?;
        Ok(missing)
    }

    /// The latest clustering run of a profile.
    pub fn cluster_run(&self, profile: &str) -> Result<Option<ClusterRun>, StoreError> {
        self.conn
            .query_row(
                "SELECT profile, as_of, window_days, failures, clusters FROM cluster_runs WHERE profile = ?1",
                params![profile],
                |r| {
                    Ok(ClusterRun {
                        profile: r.get(0)?,
                        as_of: r.get(1)?,
                        window_days: r.get(2)?,
                        failures: r.get::<_, i64>(3)?.max(0) as u64,
                        clusters: r.get::<_, i64>(4)?.max(0) as u64,
                    })
                },
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// The daily counts of a profile's latest run, ordered by cluster, day, job, test.
    pub fn cluster_daily(&self, profile: &str) -> Result<Vec<ClusterDay>, StoreError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT stable_id, day, job, test, failures FROM cluster_daily WHERE profile = ?1
                 ORDER BY stable_id, day, job, test",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map(params![profile], |r| {
                Ok(ClusterDay {
                    stable_id: r.get(0)?,
                    day: r.get(1)?,
                    job: r.get(2)?,
                    test: r.get(3)?,
                    failures: r.get::<_, i64>(4)?.max(0) as u64,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    /// A cluster's most recent failures in its profile's latest run (newest build
    /// first, ties by job, build and test position), at most `limit`.
    pub fn cluster_failures(
        &self,
        profile: &str,
        stable_id: &str,
        limit: usize,
    ) -> Result<Vec<ClusterFailure>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT b.job, b.build_id, b.bucket, b.path, b.kind, b.pr, b.started, s.text, t.failure_text
                 FROM (SELECT m.build, m.seq FROM cluster_members m JOIN builds b ON b.id = m.build
                       WHERE m.profile = ?1 AND m.stable_id = ?2
                       ORDER BY b.started DESC, b.job, b.build_id, m.seq LIMIT ?3) x
                 JOIN builds b ON b.id = x.build
                 JOIN test_results t ON t.build = x.build AND t.seq = x.seq
                 JOIN strings s ON s.id = t.name
                 ORDER BY b.started DESC, b.job, b.build_id, x.seq",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map(params![profile, stable_id, limit as i64], |r| {
                Ok(ClusterFailure {
                    job: r.get(0)?,
                    build_id: r.get(1)?,
                    bucket: r.get(2)?,
                    path: r.get(3)?,
                    kind: r.get(4)?,
                    pr: r.get::<_, Option<i64>>(5)?.map(|p| p as u64),
                    started: r.get(6)?,
                    test: r.get(7)?,
                    failure_text: r.get(8)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }
}

impl Store {
    /// The stable id every failure clustered under `profile` was first given.
    pub fn cluster_first_ids(&self, profile: &str) -> Result<Vec<FirstId>, StoreError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT b.bucket, b.path, f.seq, f.stable_id FROM cluster_failure_ids f JOIN builds b ON b.id = f.build
                 WHERE f.profile = ?1 ORDER BY b.bucket, b.path, f.seq",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map(params![profile], |r| {
                Ok(FirstId {
                    bucket: r.get(0)?,
                    path: r.get(1)?,
                    seq: r.get::<_, i64>(2)? as u32,
                    stable_id: r.get(3)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    /// Replaces the sub-patterns of a profile's latest run, in one transaction.
    pub fn record_cluster_subpatterns(&mut self, profile: &str, rows: &[StoredSubPattern]) -> Result<(), StoreError> {
        let path = self.path.clone();
        let sql = |source| StoreError::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        tx.execute("DELETE FROM cluster_subpatterns WHERE profile = ?1", params![profile]).map_err(sql)?;
        {
            let mut st = tx
                .prepare(
                    "INSERT OR REPLACE INTO cluster_subpatterns (profile, stable_id, kind, label, failures, first_seen,
                        last_seen, job, build, test, excerpt) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                )
                .map_err(sql)?;
            for r in rows {
                st.execute(params![
                    profile,
                    r.stable_id,
                    r.kind,
                    r.label,
                    r.failures as i64,
                    r.first_seen,
                    r.last_seen,
                    r.job,
                    r.build,
                    r.test,
                    r.excerpt
                ])
                .map_err(sql)?;
            }
        }
        tx.commit().map_err(sql)
    }

    /// The sub-patterns of a cluster in its profile's latest run: by kind, most failures
    /// first, then label.
    pub fn cluster_subpatterns(&self, profile: &str, stable_id: &str) -> Result<Vec<StoredSubPattern>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT stable_id, kind, label, failures, first_seen, last_seen, job, build, test, excerpt
                 FROM cluster_subpatterns WHERE profile = ?1 AND stable_id = ?2
                 ORDER BY kind DESC, failures DESC, label",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map(params![profile, stable_id], |r| {
                Ok(StoredSubPattern {
                    stable_id: r.get(0)?,
                    kind: r.get(1)?,
                    label: r.get(2)?,
                    failures: r.get::<_, i64>(3)?.max(0) as u64,
                    first_seen: r.get(4)?,
                    last_seen: r.get(5)?,
                    job: r.get(6)?,
                    build: r.get(7)?,
                    test: r.get(8)?,
                    excerpt: r.get(9)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    /// The (build row id, test position) of every member of a cluster in its profile's
    /// latest run, by build then position.
    pub fn cluster_member_rows(&self, profile: &str, stable_id: &str) -> Result<Vec<(i64, u32)>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT build, seq FROM cluster_members WHERE profile = ?1 AND stable_id = ?2 ORDER BY build, seq",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map(params![profile, stable_id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)? as u32)))
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    /// The test name and failure text of stored test results, by (build row id, position),
    /// in the order asked; `None` for a result that is not stored.
    pub fn test_results_at(&self, at: &[(i64, u32)]) -> Result<Vec<Option<NamedFailure>>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT s.text, t.failure_text FROM test_results t JOIN strings s ON s.id = t.name
                 WHERE t.build = ?1 AND t.seq = ?2",
            )
            .map_err(|e| self.err(e))?;
        at.iter()
            .map(|(b, seq)| {
                st.query_row(params![b, seq], |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?)))
                    .optional()
                    .map_err(|e| self.err(e))
            })
            .collect()
    }
}

fn upsert(tx: &rusqlite::Transaction<'_>, profile: &str, rows: &[StoredCluster]) -> rusqlite::Result<()> {
    let mut st = tx.prepare(
        "INSERT INTO clusters (profile, stable_id, key, k8s_id, size, first_seen, last_seen, text, spans, owner,
            signatures, tests, jobs, run_as_of)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
         ON CONFLICT (profile, stable_id) DO UPDATE SET key = excluded.key, k8s_id = excluded.k8s_id,
            size = excluded.size, first_seen = min(first_seen, excluded.first_seen),
            last_seen = max(last_seen, excluded.last_seen), text = excluded.text, spans = excluded.spans,
            owner = excluded.owner, signatures = excluded.signatures, tests = excluded.tests, jobs = excluded.jobs,
            run_as_of = max(run_as_of, excluded.run_as_of)",
    )?;
    for c in rows {
        st.execute(params![
            profile,
            c.stable_id,
            c.key,
            c.k8s_id,
            c.size as i64,
            c.first_seen,
            c.last_seen,
            c.text,
            serde_json::to_string(&c.spans).unwrap_or_else(|_| "[]".into()),
            c.owner,
            serde_json::to_string(&c.signatures).unwrap_or_else(|_| "[]".into()),
            c.tests as i64,
            c.jobs as i64,
            c.run_as_of
        ])?;
    }
    Ok(())
}
