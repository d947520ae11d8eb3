//! The store against a real SQLite file and a real PostgreSQL database: migrations,
//! idempotent imports, history queries, and a failed import leaving the store
//! exactly as it was.

mod common;

use citriage_model::{Dataset, Day, FlakeStats, JobEntry, JobStats, Snapshot, SnapshotMeta};
use citriage_store::{Store, SCHEMA_VERSION};
use std::collections::BTreeMap;

fn snap(date: &str, sha: &str, jobs: Vec<JobEntry>) -> Snapshot {
    Snapshot::new(
        SnapshotMeta {
            dataset: Dataset::Flakes,
            date: Day::parse(date).unwrap(),
            source: format!("flakes-{date}.json"),
            sha256: sha.into(),
        },
        jobs,
    )
}

fn flake(job: &str, c: f64, tests: Option<&[(&str, u64)]>) -> JobEntry {
    JobEntry {
        job: job.into(),
        stats: JobStats::Flakes(FlakeStats {
            consistency: c,
            flakes: 3,
            test_flakes: tests.map(|t| t.iter().map(|(k, v)| (k.to_string(), *v)).collect::<BTreeMap<_, _>>()),
        }),
    }
}

#[test]
fn round_trip_history_and_idempotence() {
    let nested = common::sqlite_at("nested/dir/c.db");
    let mut fresh = common::backends("round_trip_history_and_idempotence");
    fresh[0] = nested;
    for f in &fresh {
        round_trip(f);
    }
}

fn round_trip(f: &common::Fresh) {
    let mut st = f.open();
    assert_eq!(st.schema_version().unwrap(), SCHEMA_VERSION);
    let a =
        snap("2026-11-20", "aa", vec![flake("ci-x", 0.5, Some(&[("t/1", 2), ("Up", 1)])), flake("ci-y", 1.0, None)]);
    let b = snap("2026-11-21", "bb", vec![flake("ci-x", 0.7, Some(&[]))]);
    assert!(st.import_snapshot(&a, "t0").unwrap().inserted);
    assert!(st.import_snapshot(&b, "t1").unwrap().inserted);
    let again = st.import_snapshot(&a, "t2").unwrap();
    assert!(!again.inserted, "same content and date is stored once");
    drop(st);
    let st = f.open();
    assert_eq!(st.list_snapshots(None).unwrap().len(), 2, "{}", f.name);
    let latest = st.latest(Dataset::Flakes).unwrap().unwrap();
    assert_eq!(latest.date.to_string(), "2026-11-21");
    let prev = st.previous(Dataset::Flakes, latest.date).unwrap().unwrap();
    let loaded = st.load_snapshot(prev.id).unwrap();
    assert_eq!(loaded, a, "a stored snapshot loads back equal, null and empty test_flakes kept apart");
    assert_eq!(st.load_snapshot(latest.id).unwrap(), b);
    assert!(st.latest(Dataset::Failures).unwrap().is_none());
}

#[test]
fn a_failed_import_changes_nothing() {
    for f in common::backends("a_failed_import_changes_nothing") {
        failed_import(&f);
    }
}

fn failed_import(f: &common::Fresh) {
    let mut st = f.open();
    st.import_snapshot(&snap("2026-11-20", "aa", vec![flake("ci-x", 0.5, None)]), "t0").unwrap();
    // Two entries for one job violate the primary key halfway through the import.
    let mut bad = snap("2026-11-21", "bb", vec![flake("ci-a", 0.5, None), flake("ci-b", 0.5, None)]);
    bad.jobs.push(flake("ci-a", 0.9, None));
    assert!(st.import_snapshot(&bad, "t1").is_err());
    let list = st.list_snapshots(None).unwrap();
    assert_eq!(list.len(), 1, "the half-written snapshot was rolled back");
    assert_eq!(st.snapshot_job_names(list[0].id).unwrap().len(), 1);
}

#[test]
fn refuses_a_newer_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.db");
    drop(Store::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(&format!("PRAGMA user_version = {}", SCHEMA_VERSION + 5)).unwrap();
    drop(conn);
    let e = Store::open(&path).err().expect("refused").to_string();
    assert!(e.contains("newer than this citriage understands"), "{e}");
}

#[test]
#[cfg(feature = "postgres")]
fn postgres_refuses_a_newer_schema() {
    let Ok(f) = common::postgres().map_err(|e| eprintln!("postgres_refuses_a_newer_schema: skipped: {e}")) else {
        return;
    };
    drop(f.open());
    let citriage_store::Location::Postgres(url) = &f.location else { unreachable!() };
    common::cluster()
        .unwrap()
        .execute(url, &format!("UPDATE citriage_schema SET version = {}", SCHEMA_VERSION + 5))
        .unwrap();
    // A new process has not checked the schema yet; this one remembers it did, so
    // ask through a URL this process has not opened.
    let other = citriage_store::Location::Postgres(format!("{url}?application_name=other"));
    let e = other.open().err().expect("refused").to_string();
    assert!(e.contains("newer than this citriage understands"), "{e}");
    assert!(!e.contains("password"), "{e}");
}

#[test]
fn evidence_ledger_keeps_the_first_reading() {
    evidence_ledger(Store::open_in_memory().unwrap());
    for f in common::backends("evidence_ledger_keeps_the_first_reading") {
        evidence_ledger(f.open());
    }
}

fn evidence_ledger(mut st: Store) {
    use citriage_model::{Evidence, EvidenceKind};
    let a = Evidence::new(
        EvidenceKind::BuildResult,
        "https://prow.k8s.io/view/gs/b/logs/j/1/finished.json",
        "result=FAILURE",
        "",
        "2026-11-20",
    );
    let b =
        Evidence::new(EvidenceKind::PullRequestState, "github:/repos/o/r/pulls/1", "o/r#1 MERGED", "abc", "2026-11-21");
    assert_eq!(st.record_evidence(&[a.clone(), b.clone()], "2026-11-21T10:00:00Z").unwrap(), 2);
    assert_eq!(
        st.record_evidence(std::slice::from_ref(&a), "2026-11-22T10:00:00Z").unwrap(),
        0,
        "same content, same id: not new"
    );
    let got = st.evidence(&a.id).unwrap().unwrap();
    assert_eq!(got.evidence, a);
    assert_eq!(got.read_at, "2026-11-21T10:00:00Z");
    assert!(st.evidence("ev-000000000000").unwrap().is_none());
    let by = st.evidence_by_locator("https://prow.k8s.io/view/gs/b/").unwrap();
    assert_eq!(by.len(), 1);
    assert_eq!(by[0].evidence.kind, EvidenceKind::BuildResult);
}

/// Many connections opening one fresh SQLite file at once: the one that converts it to
/// WAL needs it to itself and SQLite does not wait for that on its own, so the others
/// must wait for it instead of failing with "database is locked".
#[test]
fn many_connections_opening_a_fresh_sqlite_store_at_once_all_succeed() {
    let dir = tempfile::tempdir().unwrap();
    for round in 0..8 {
        let path = dir.path().join(format!("fresh-{round}.db"));
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(16));
        let opened: Vec<Result<i64, String>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..16)
                .map(|_| {
                    let (path, barrier) = (path.clone(), barrier.clone());
                    s.spawn(move || {
                        barrier.wait();
                        Store::open(&path).and_then(|st| st.schema_version()).map_err(|e| e.to_string())
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for r in &opened {
            assert_eq!(r.as_ref().ok(), Some(&SCHEMA_VERSION), "round {round}: {r:?}");
        }
        let conn = rusqlite::Connection::open(&path).unwrap();
        let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
        assert_eq!(mode, "wal", "round {round}");
    }
}
