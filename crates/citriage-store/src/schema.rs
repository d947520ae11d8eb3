//! The schema: ordered migrations written once in SQLite's dialect and translated
//! word by word for PostgreSQL (see [`postgres_ddl`]), so both engines go through the
//! same versions. SQLite keeps the version in `PRAGMA user_version`; PostgreSQL in
//! the one-row table `citriage_schema`. Pending migrations run in one exclusive
//! transaction (SQLite `BEGIN IMMEDIATE`; PostgreSQL under a transaction-level
//! advisory lock) that re-reads the version first, so two processes opening a new
//! store at once apply each migration exactly once.

use crate::db::{Conn, DbError, Exec};

/// Ordered schema migrations; entry `i` moves the schema from version `i` to `i + 1`.
pub(crate) const MIGRATIONS: &[&str] = &[
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
    INSERT INTO cluster_failure_ids (profile, build, seq, stable_id)
        SELECT profile, build, seq, stable_id FROM cluster_members WHERE true ON CONFLICT DO NOTHING;
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
    // 8: indexes for the dashboard's window reads at Kubernetes scale: builds by start
    // time (the window's builds), and the failed results alone (failure texts of a
    // window read without touching the passing results).
    "CREATE INDEX builds_by_started ON builds (started);
    CREATE INDEX test_results_failed ON test_results (build, seq) WHERE status IN (1, 2);",
    // 9: continuous ingestion: each configured source's status (last success, last
    // error, consecutive failures and the backoff they earned, when it is next due) and
    // the lease a worker holds on it while fetching, so two workers never fetch one
    // source at once. Times are Unix seconds.
    "CREATE TABLE ingest_sources (
        source TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        lease_holder TEXT,
        lease_until INTEGER NOT NULL DEFAULT 0,
        last_attempt INTEGER,
        last_success INTEGER,
        last_error TEXT,
        last_error_at INTEGER,
        failures INTEGER NOT NULL DEFAULT 0,
        next_due INTEGER NOT NULL DEFAULT 0,
        ticks INTEGER NOT NULL DEFAULT 0,
        errors INTEGER NOT NULL DEFAULT 0,
        builds_stored INTEGER NOT NULL DEFAULT 0,
        newest_started INTEGER
    ) WITHOUT ROWID;",
    // 10: what kettle records for a build where it reads it differently from citriage
    // (JSON of `KettleFacts`: its result, version, commit, repos, or why it writes no
    // row); NULL for builds stored before, whose kettle figures use citriage's fields.
    "ALTER TABLE builds ADD COLUMN kettle TEXT;",
    // 11: where TestGrid shows the build's job (JSON of `TestgridPlace`: its
    // `testgrid-dashboards` and `testgrid-tab-name` annotations); NULL when none.
    "ALTER TABLE builds ADD COLUMN testgrid TEXT;",
    // 12: triage records: what a failure pattern, a job or a payload root cause is
    // (`subject`), its state as the evidence moved it (`version` counts every change, so
    // two workers never lose one: each write is conditional on the version it read), the
    // issues and pull requests linked to it (with who or what linked them, when, and
    // when they were unlinked; the GitHub state last read) and every transition with its
    // time, the evidence ids it rests on and why. Times are Unix seconds. The failures
    // first given a stable id are found by it (a record's builds).
    "CREATE TABLE records (
        subject TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('pattern', 'job', 'payload')),
        profile TEXT NOT NULL,
        key TEXT NOT NULL,
        title TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('new', 'triaged', 'fix-merged', 'fix-confirmed', 'failed-after-fix')),
        since INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        version INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX records_by_state ON records (state, since, subject);
    CREATE TABLE record_links (
        subject TEXT NOT NULL REFERENCES records (subject) ON DELETE CASCADE,
        reference TEXT NOT NULL,
        n INTEGER NOT NULL,
        source TEXT NOT NULL CHECK (source IN ('links-file', 'bug-draft', 'github', 'hand')),
        linked_by TEXT NOT NULL,
        linked_at INTEGER NOT NULL,
        unlinked_at INTEGER,
        unlinked_by TEXT,
        ref_kind TEXT NOT NULL,
        ref_state TEXT NOT NULL,
        merged_at INTEGER,
        merge_commit TEXT,
        base_branch TEXT,
        read_at INTEGER,
        note TEXT NOT NULL,
        PRIMARY KEY (subject, reference, n)
    ) WITHOUT ROWID;
    CREATE TABLE record_transitions (
        subject TEXT NOT NULL REFERENCES records (subject) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        from_state TEXT NOT NULL,
        to_state TEXT NOT NULL,
        at INTEGER NOT NULL,
        recorded_at INTEGER NOT NULL,
        evidence TEXT NOT NULL,
        reason TEXT NOT NULL,
        PRIMARY KEY (subject, seq)
    ) WITHOUT ROWID;
    CREATE INDEX record_transitions_by_recorded ON record_transitions (recorded_at, subject, seq);
    CREATE INDEX cluster_failure_ids_by_id ON cluster_failure_ids (profile, stable_id, build);",
    // 13: alerts: the rules' state per subject and kind (JSON), every alert raised
    // (keyed by its idempotency key, its title and plain text for the dashboard's feed,
    // JSON body, why it was held if the verifier flagged it), and the outbox: one row per
    // message and destination with its delivery state,
    // attempts, next retry and the lease of the worker sending it, and the alerts each
    // message carries. Times are Unix seconds.
    "CREATE TABLE alert_states (
        kind TEXT NOT NULL,
        subject TEXT NOT NULL,
        state TEXT NOT NULL,
        PRIMARY KEY (kind, subject)
    ) WITHOUT ROWID;
    CREATE TABLE alerts (
        key TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        change TEXT NOT NULL,
        subject TEXT NOT NULL,
        owner TEXT NOT NULL,
        at INTEGER NOT NULL,
        title TEXT NOT NULL,
        text TEXT NOT NULL,
        body TEXT NOT NULL,
        held TEXT,
        raised_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX alerts_by_at ON alerts (at, key);
    CREATE TABLE alert_outbox (
        message TEXT NOT NULL,
        destination TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('open', 'pending', 'sent', 'failed')),
        digest_day INTEGER,
        created INTEGER NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt INTEGER NOT NULL DEFAULT 0,
        lease_holder TEXT,
        lease_until INTEGER NOT NULL DEFAULT 0,
        last_attempt INTEGER,
        last_error TEXT,
        sent_at INTEGER,
        PRIMARY KEY (message, destination)
    ) WITHOUT ROWID;
    CREATE INDEX alert_outbox_due ON alert_outbox (state, next_attempt);
    CREATE TABLE alert_outbox_items (
        message TEXT NOT NULL,
        destination TEXT NOT NULL,
        alert TEXT NOT NULL REFERENCES alerts (key),
        PRIMARY KEY (message, destination, alert),
        FOREIGN KEY (message, destination) REFERENCES alert_outbox (message, destination) ON DELETE CASCADE
    ) WITHOUT ROWID;",
    // 14: TestGrid as a source. On a build's row, what the sources other than its
    // origin showed of it (JSON: TestGrid's facts of a build GCS also has, or of a build
    // only TestGrid has), NULL when its origin is all; and the TestGrid tabs read, with
    // their metadata (links, alert settings) and what they held.
    "ALTER TABLE builds ADD COLUMN sources TEXT;
    CREATE TABLE testgrid_tabs (
        dashboard TEXT NOT NULL,
        tab TEXT NOT NULL,
        test_group TEXT,
        query TEXT,
        bucket TEXT NOT NULL,
        job TEXT NOT NULL,
        meta TEXT NOT NULL,
        columns INTEGER NOT NULL,
        rows INTEGER NOT NULL,
        status_counts TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        read_at INTEGER NOT NULL,
        PRIMARY KEY (dashboard, tab)
    ) WITHOUT ROWID;",
    // 15: what each build ran with (`BuildVersion`): the document an entry is read from
    // (`prowjob.json`, `started.json`, `finished.json`), its key there (the pod spec's
    // `spec.pod_spec.containers[NAME].image`, `metadata.job-version`) and its value, so
    // the two ends of a regression window can be compared. Builds stored before have none.
    "CREATE TABLE build_versions (
        build INTEGER NOT NULL REFERENCES builds (id) ON DELETE CASCADE,
        file TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (build, file, key)
    ) WITHOUT ROWID;",
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// A SQLite migration in PostgreSQL's dialect. Word by word outside quotes:
/// `INTEGER PRIMARY KEY` (SQLite's rowid alias) becomes a `BIGINT` identity column,
/// `INTEGER` `BIGINT`, `REAL` `DOUBLE PRECISION`, `BLOB` `BYTEA`, `TEXT` `TEXT COLLATE "C"`
/// (bytewise order, as SQLite compares, so both engines sort alike whatever the
/// database's locale), and `WITHOUT ROWID` is dropped (PostgreSQL tables have no rowid).
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub(crate) fn postgres_ddl(sql: &str) -> String {
    let sql = sql.replace(" WITHOUT ROWID", "");
    let mut out = String::with_capacity(sql.len() + 64);
    let mut word = String::new();
    let mut quoted = false;
    let mut rest = sql.chars().peekable();
    let flush = |word: &mut String, out: &mut String, after: &str| {
        match word.as_str() {
            "INTEGER" if after.trim_start().starts_with("PRIMARY KEY") => {
                out.push_str("BIGINT GENERATED BY DEFAULT AS IDENTITY")
            }
            "INTEGER" => out.push_str("BIGINT"),
            "REAL" => out.push_str("DOUBLE PRECISION"),
            "BLOB" => out.push_str("BYTEA"),
            "TEXT" => out.push_str("TEXT COLLATE \"C\""),
            w => out.push_str(w),
        }
        word.clear();
    };
    let mut i = 0;
    let bytes_of = sql.as_str();
    while let Some(c) = rest.next() {
        i += c.len_utf8();
        if quoted {
            out.push(c);
            if c == '\'' {
                quoted = false;
            }
            continue;
        }
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
            if !rest.peek().is_some_and(|d| d.is_ascii_alphanumeric() || *d == '_') {
                flush(&mut word, &mut out, &bytes_of[i..]);
            }
            continue;
        }
        if c == '\'' {
            quoted = true;
        }
        out.push(c);
    }
    out
}

/// Brings a SQLite store's schema up to date; returns the version found before.
pub(crate) fn migrate_sqlite(conn: &Conn) -> Result<Result<i64, i64>, DbError> {
    let version = conn.reader().int("PRAGMA user_version", &[])?;
    if version > SCHEMA_VERSION {
        return Ok(Err(version));
    }
    if version == SCHEMA_VERSION {
        return Ok(Ok(version));
    }
    conn.write(&mut |tx| {
        // Another process may have migrated while this one waited for the lock.
        let version = tx.int("PRAGMA user_version", &[])?;
        if version > SCHEMA_VERSION {
            return Ok(Err(version));
        }
        for m in MIGRATIONS.iter().skip(version as usize) {
            tx.batch(m)?;
        }
        tx.batch(&format!("PRAGMA user_version = {SCHEMA_VERSION}"))?;
        Ok(Ok(version))
    })
}

/// The advisory lock key under which PostgreSQL migrations run ("citriage" in ASCII).
#[cfg(feature = "postgres")]
const MIGRATION_LOCK: i64 = 0x6369_7472_6961_6765;

/// The schema version of a PostgreSQL store (0 before the first migration).
#[cfg(feature = "postgres")]
pub(crate) fn pg_version(e: &mut impl Exec) -> Result<i64, DbError> {
    let exists = e.int("SELECT count(*) FROM pg_catalog.pg_tables WHERE tablename = 'citriage_schema' AND schemaname = current_schema()", &[])?;
    if exists == 0 {
        return Ok(0);
    }
    Ok(e.opt("SELECT version FROM citriage_schema", &[], |r| r.i64(0))?.unwrap_or(0))
}

/// Brings a PostgreSQL store's schema up to date; returns the version found before.
#[cfg(feature = "postgres")]
pub(crate) fn migrate_postgres(conn: &Conn) -> Result<Result<i64, i64>, DbError> {
    let version = pg_version(&mut conn.reader())?;
    if version > SCHEMA_VERSION {
        return Ok(Err(version));
    }
    if version == SCHEMA_VERSION {
        return Ok(Ok(version));
    }
    conn.write(&mut |tx| {
        tx.exec("SELECT pg_advisory_xact_lock(?1)", crate::db::vals![MIGRATION_LOCK])?;
        let version = pg_version(tx)?;
        if version > SCHEMA_VERSION {
            return Ok(Err(version));
        }
        if version == 0 {
            tx.batch("CREATE TABLE IF NOT EXISTS citriage_schema (version BIGINT NOT NULL); DELETE FROM citriage_schema; INSERT INTO citriage_schema VALUES (0)")?;
        }
        for m in MIGRATIONS.iter().skip(version as usize) {
            tx.batch(&postgres_ddl(m))?;
        }
        tx.exec("UPDATE citriage_schema SET version = ?1", crate::db::vals![SCHEMA_VERSION])?;
        Ok(Ok(version))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ddl_is_translated_word_by_word() {
        let pg = postgres_ddl(
            "CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, x REAL, b BLOB, text TEXT NOT NULL DEFAULT 'INTEGER', integer_count INTEGER) WITHOUT ROWID;",
        );
        assert_eq!(
            pg,
            "CREATE TABLE t (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, n BIGINT NOT NULL, x DOUBLE PRECISION, b BYTEA, text TEXT COLLATE \"C\" NOT NULL DEFAULT 'INTEGER', integer_count BIGINT);"
        );
    }
}
