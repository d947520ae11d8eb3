//! Continuous ingestion's bookkeeping: one row per configured source with its
//! status (last success, last error, consecutive failures, when it is next due) and
//! the lease a worker holds while it fetches the source. A lease is taken by one
//! conditional `UPDATE` (free, expired, or already this worker's), which both engines
//! run atomically, so two workers on one store never fetch one source at once; a
//! worker that dies leaves a lease that expires, or that the same worker name
//! takes back on restart. Times are Unix seconds given by the caller.

use crate::db::{vals, Exec};
use crate::{Store, StoreError};
use serde::Serialize;

/// One source's status as the status page and `/metrics` show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceStatus {
    pub source: String,
    /// `bucket`, `dashboard`, `release-stream`, `github`, `testgrid`.
    pub kind: String,
    /// The worker fetching it now (its lease has not expired), if any.
    pub lease_holder: Option<String>,
    pub lease_until: i64,
    pub last_attempt: Option<i64>,
    pub last_success: Option<i64>,
    pub last_error: Option<String>,
    pub last_error_at: Option<i64>,
    /// Consecutive failed attempts (0 after a success).
    pub failures: i64,
    /// When the source is next fetched (after a failure: when its backoff ends).
    pub next_due: i64,
    /// Attempts and failed attempts since the source was first configured.
    pub ticks: i64,
    pub errors: i64,
    /// What the source's attempts stored: builds (a bucket, a TestGrid source), payload analyses (a
    /// release stream), pull requests and issues read again (a GitHub repository).
    pub builds_stored: i64,
    /// Start of the newest build the source stored.
    pub newest_started: Option<i64>,
}

/// How an attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attempt {
    /// Succeeded: builds stored, the newest build's start, when the source is next due.
    Ok { builds_stored: i64, newest_started: Option<i64>, next_due: i64 },
    /// Failed: why, when it is retried.
    Failed { error: String, builds_stored: i64, next_due: i64 },
}

impl Store {
    /// Takes (or renews) the lease on a source for `holder` until `now + lease_secs`,
    /// creating the source's row if needed. False when another worker holds an
    /// unexpired lease.
    pub fn claim_source(
        &mut self,
        source: &str,
        kind: &str,
        holder: &str,
        now: i64,
        lease_secs: i64,
    ) -> Result<bool, StoreError> {
        let until = now.saturating_add(lease_secs.max(1));
        self.conn
            .write(&mut |tx| {
                tx.exec(
                    "INSERT INTO ingest_sources (source, kind) VALUES (?1, ?2) ON CONFLICT (source) DO NOTHING",
                    vals![source, kind],
                )?;
                let n = tx.exec(
                    "UPDATE ingest_sources SET lease_holder = ?2, lease_until = ?3, kind = ?5
                     WHERE source = ?1 AND (lease_holder IS NULL OR lease_holder = ?2 OR lease_until < ?4)",
                    vals![source, holder, until, now, kind],
                )?;
                Ok(n == 1)
            })
            .map_err(|e| self.err(e))
    }

    /// Records an attempt of `holder` on a source and releases its lease. Nothing is
    /// recorded if the lease was lost to another worker meanwhile (false).
    pub fn finish_source(&mut self, source: &str, holder: &str, now: i64, a: &Attempt) -> Result<bool, StoreError> {
        self.conn
            .write(&mut |tx| {
                let n = match a {
                    Attempt::Ok { builds_stored, newest_started, next_due } => tx.exec(
                        "UPDATE ingest_sources SET lease_holder = NULL, lease_until = 0, last_attempt = ?3,
                            last_success = ?3, failures = 0, next_due = ?4, ticks = ticks + 1,
                            builds_stored = builds_stored + ?5,
                            newest_started = CASE WHEN newest_started IS NULL OR newest_started < ?6
                                THEN ?6 ELSE newest_started END
                         WHERE source = ?1 AND lease_holder = ?2",
                        vals![source, holder, now, *next_due, *builds_stored, *newest_started],
                    )?,
                    Attempt::Failed { error, builds_stored, next_due } => tx.exec(
                        "UPDATE ingest_sources SET lease_holder = NULL, lease_until = 0, last_attempt = ?3,
                            last_error = ?4, last_error_at = ?3, failures = failures + 1, next_due = ?5,
                            ticks = ticks + 1, errors = errors + 1, builds_stored = builds_stored + ?6
                         WHERE source = ?1 AND lease_holder = ?2",
                        vals![source, holder, now, error.as_str(), *next_due, *builds_stored],
                    )?,
                };
                Ok(n == 1)
            })
            .map_err(|e| self.err(e))
    }

    /// The start of the newest build stored from a bucket (a source's freshness), or
    /// from any bucket.
    pub fn newest_build_started(&self, bucket: Option<&str>) -> Result<Option<i64>, StoreError> {
        self.conn
            .reader()
            .opt("SELECT max(started) FROM builds WHERE CAST(?1 AS TEXT) IS NULL OR bucket = ?1", vals![bucket], |r| {
                r.opt_i64(0)
            })
            .map(Option::flatten)
            .map_err(|e| self.err(e))
    }

    /// Retention, in one transaction: removes the builds started before
    /// `builds_before` (with their results, artifacts, excerpts and cluster
    /// memberships) and the log excerpts of builds started before `excerpts_before`.
    /// Builds without a start are kept. Returns (builds, excerpts) removed.
    pub fn prune(&mut self, builds_before: i64, excerpts_before: i64) -> Result<(u64, u64), StoreError> {
        self.conn
            .write(&mut |tx| {
                let excerpts = tx.exec(
                    "DELETE FROM build_excerpts WHERE build IN
                        (SELECT id FROM builds WHERE started < ?1 AND started >= ?2)",
                    vals![excerpts_before, builds_before],
                )?;
                let builds = tx.exec("DELETE FROM builds WHERE started < ?1", vals![builds_before])?;
                Ok((builds, excerpts))
            })
            .map_err(|e| self.err(e))
    }

    /// Every source's status, by name.
    pub fn source_statuses(&self) -> Result<Vec<SourceStatus>, StoreError> {
        self.conn
            .reader()
            .rows(
                "SELECT source, kind, lease_holder, lease_until, last_attempt, last_success, last_error, last_error_at,
                    failures, next_due, ticks, errors, builds_stored, newest_started
                 FROM ingest_sources ORDER BY source",
                &[],
                |r| {
                    Ok(SourceStatus {
                        source: r.string(0)?,
                        kind: r.string(1)?,
                        lease_holder: r.opt_string(2)?,
                        lease_until: r.i64(3)?,
                        last_attempt: r.opt_i64(4)?,
                        last_success: r.opt_i64(5)?,
                        last_error: r.opt_string(6)?,
                        last_error_at: r.opt_i64(7)?,
                        failures: r.i64(8)?,
                        next_due: r.i64(9)?,
                        ticks: r.i64(10)?,
                        errors: r.i64(11)?,
                        builds_stored: r.i64(12)?,
                        newest_started: r.opt_i64(13)?,
                    })
                },
            )
            .map_err(|e| self.err(e))
    }
}
