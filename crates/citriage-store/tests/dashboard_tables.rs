//! The tables the dashboard reads, against a real SQLite file: failed-test counts and
//! log excerpts written with their build (and replaced with it), a clustering run
//! replacing the previous run's membership, documents, and the migration from a
//! version-5 store backfilling failed-test counts; on SQLite and PostgreSQL.

mod common;

use citriage_model::build::{BuildRecord, LogExcerpt, StoredTest};
use citriage_store::{ClusterDay, ClusterMember, ClusterRun, Document, Store, StoredCluster, SCHEMA_VERSION};

fn test(name: &str, status: &str, text: Option<&str>) -> StoredTest {
    StoredTest {
        file: "artifacts/junit.xml".into(),
        suite: "e2e".into(),
        classname: "e2e".into(),
        name: name.into(),
        status: status.into(),
        duration: None,
        failure_text: text.map(str::to_string),
        attempt: 0,
        informing: false,
        kettle_name: Some(name.into()),
    }
}

fn build(job: &str, id: &str, started: i64, tests: Vec<StoredTest>, excerpts: Vec<LogExcerpt>) -> BuildRecord {
    BuildRecord {
        kettle: None,
        testgrid: None,
        bucket: "b".into(),
        path: format!("logs/{job}/{id}"),
        job: job.into(),
        build_id: id.into(),
        kind: "periodic".into(),
        pr: None,
        commit_sha: None,
        repo_commit: None,
        repo_version: None,
        repos: None,
        started: Some(started),
        finished: Some(started + 60),
        duration: Some(60),
        result: Some("FAILURE".into()),
        state: None,
        executor: None,
        origin: "gcs".into(),
        problems: Vec::new(),
        complete: true,
        tests,
        artifacts: Vec::new(),
        excerpts,
        versions: Vec::new(),
    }
}

fn excerpt(line: u32, text: &str) -> LogExcerpt {
    LogExcerpt { source: "build-log.txt".into(), line_start: line, line_end: line, text: text.into() }
}

#[test]
fn failed_counts_and_excerpts_travel_with_the_build() {
    for f in common::backends("failed_counts_and_excerpts_travel_with_the_build") {
        failed_counts_and_excerpts_travel_with_the_build_on(f.open());
    }
}

fn failed_counts_and_excerpts_travel_with_the_build_on(mut st: Store) {
    let tests = vec![
        test("a", "passed", None),
        test("s", "skipped", None),
        test("b", "failed", Some("boom")),
        test("c", "error", Some("bang")),
    ];
    st.put_build(&build("ci-x", "1", 100, tests.clone(), vec![excerpt(7, "E1 boom"), excerpt(9, "F2 bang")])).unwrap();
    let idx = st.build_index().unwrap();
    assert_eq!(idx.len(), 1);
    assert_eq!(idx[0].failed_tests, 2);
    let mut seen = Vec::new();
    let n = st
        .for_each_failure_text(None, |b, seq, name, text| seen.push((b, seq, name.to_string(), text.to_string())))
        .unwrap();
    assert_eq!(n, 2);
    // Skipped tests are not stored, so "b" sits at position 1.
    assert_eq!(seen, vec![(idx[0].id, 1, "b".into(), "boom".into()), (idx[0].id, 2, "c".into(), "bang".into())]);
    // A window that starts at the build's start leaves it out; one before it keeps it.
    assert_eq!(st.for_each_failure_text(Some(100), |_, _, _, _| {}).unwrap(), 0);
    assert_eq!(st.for_each_failure_text(Some(99), |_, _, _, _| {}).unwrap(), 2);
    assert_eq!(st.for_each_excerpt(Some(100), |_, _| {}).unwrap(), 0);
    assert_eq!(st.for_each_excerpt(Some(99), |_, _| {}).unwrap(), 2);
    let loaded = st.job_builds_with_tests("ci-x", None).unwrap();
    assert_eq!(loaded[0].excerpts, vec![excerpt(7, "E1 boom"), excerpt(9, "F2 bang")]);
    // Re-ingesting replaces the excerpts instead of adding to them.
    st.put_build(&build("ci-x", "1", 100, tests, vec![excerpt(8, "only")])).unwrap();
    let mut ex = Vec::new();
    st.for_each_excerpt(None, |b, e| ex.push((b, e.clone()))).unwrap();
    assert_eq!(ex.len(), 1);
    assert_eq!(ex[0].1, excerpt(8, "only"));
    assert_eq!(st.build_index().unwrap()[0].id, ex[0].0);
}

fn cluster(id: &str, size: u64, first: i64) -> StoredCluster {
    StoredCluster {
        stable_id: id.into(),
        key: format!("key {id}"),
        k8s_id: format!("k-{id}"),
        size,
        first_seen: first,
        last_seen: first + 10,
        text: format!("text {id}"),
        spans: vec![5, 2],
        owner: "node".into(),
        signatures: vec!["sig-a".into()],
        tests: 1,
        jobs: 1,
        run_as_of: 1000,
    }
}

#[test]
fn a_clustering_run_replaces_the_previous_membership() {
    for f in common::backends("a_clustering_run_replaces_the_previous_membership") {
        a_clustering_run_replaces_the_previous_membership_on(f.open());
    }
}

fn a_clustering_run_replaces_the_previous_membership_on(mut st: Store) {
    let tests = vec![test("a", "failed", Some("x")), test("b", "failed", Some("y"))];
    st.put_build(&build("ci-x", "1", 86_400, tests.clone(), vec![])).unwrap();
    st.put_build(&build("ci-x", "2", 2 * 86_400, tests, vec![])).unwrap();
    let member = |sid: &str, path: &str, seq: u32| ClusterMember {
        stable_id: sid.into(),
        bucket: "b".into(),
        path: path.into(),
        seq,
    };
    let run = ClusterRun { profile: "default".into(), as_of: 3 * 86_400, window_days: 14, failures: 4, clusters: 2 };
    let members = vec![
        member("c1", "logs/ci-x/1", 0),
        member("c1", "logs/ci-x/2", 0),
        member("c2", "logs/ci-x/2", 1),
        member("c2", "logs/ci-x/404", 1),
    ];
    let daily = vec![
        ClusterDay { stable_id: "c1".into(), day: 1, job: "ci-x".into(), test: "a".into(), failures: 1 },
        ClusterDay { stable_id: "c1".into(), day: 2, job: "ci-x".into(), test: "a".into(), failures: 1 },
    ];
    let missing = st
        .record_cluster_run(&run, &[cluster("c1", 2, 86_400), cluster("c2", 1, 2 * 86_400)], &members, &daily)
        .unwrap();
    assert_eq!(missing, 1, "the member of an unknown build is counted, not stored");
    assert_eq!(st.cluster_run("default").unwrap(), Some(run.clone()));
    assert_eq!(st.cluster_daily("default").unwrap(), daily);
    let c1 = st.cluster("default", "c1").unwrap().unwrap();
    assert_eq!(c1.spans, vec![5, 2]);
    assert_eq!(c1.signatures, vec!["sig-a".to_string()]);
    let latest = st.cluster_failures("default", "c1", 10).unwrap();
    assert_eq!(latest.iter().map(|f| f.build_id.as_str()).collect::<Vec<_>>(), ["2", "1"], "newest first");
    assert_eq!(latest[0].test, "a");
    assert_eq!(latest[0].failure_text.as_deref(), Some("x"));
    assert_eq!(st.cluster_failures("default", "c1", 1).unwrap().len(), 1);
    let ids: Vec<i64> = st.build_index().unwrap().iter().map(|b| b.id).collect();
    assert_eq!(st.cluster_member_rows("default", "c1").unwrap(), vec![(ids[0], 0), (ids[1], 0)]);
    assert_eq!(
        st.test_results_at(&[(ids[1], 1), (ids[1], 9)]).unwrap(),
        vec![Some(("b".to_string(), Some("y".to_string()))), None]
    );

    // A second run keeps first sightings but replaces members and daily counts.
    let run2 = ClusterRun { as_of: 4 * 86_400, failures: 1, clusters: 1, ..run };
    st.record_cluster_run(&run2, &[cluster("c1", 1, 2 * 86_400)], &[member("c1", "logs/ci-x/2", 0)], &[]).unwrap();
    assert!(st.cluster_daily("default").unwrap().is_empty());
    assert_eq!(st.cluster_failures("default", "c1", 10).unwrap().len(), 1);
    assert!(st.cluster_failures("default", "c2", 10).unwrap().is_empty());
    assert_eq!(st.cluster("default", "c1").unwrap().unwrap().first_seen, 86_400);
    // Re-ingesting a build drops its memberships with it (they belong to the old copy).
    st.put_build(&build("ci-x", "2", 2 * 86_400, vec![test("a", "failed", Some("x"))], vec![])).unwrap();
    assert!(st.cluster_failures("default", "c1", 10).unwrap().is_empty());
}

#[test]
fn documents_are_replaced_by_kind_key_and_type() {
    for f in common::backends("documents_are_replaced_by_kind_key_and_type") {
        documents_are_replaced_by_kind_key_and_type_on(f.open());
    }
}

fn documents_are_replaced_by_kind_key_and_type_on(mut st: Store) {
    let doc = |key: &str, as_of: &str, body: &str| Document {
        kind: "triage".into(),
        key: key.into(),
        media_type: "text/markdown".into(),
        title: format!("Report {key}"),
        as_of: as_of.into(),
        body: body.into(),
    };
    st.put_document(&doc("failures/2026-11-20", "2026-11-20", "old")).unwrap();
    st.put_document(&doc("failures/2026-11-21", "2026-11-21", "# new é")).unwrap();
    st.put_document(&doc("failures/2026-11-20", "2026-11-20", "# replaced")).unwrap();
    let list = st.documents(Some("triage")).unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0].key, "failures/2026-11-21", "newest first");
    assert_eq!(list[0].bytes, "# new é".len() as u64);
    assert_eq!(list[0].sha256.len(), 64);
    assert_eq!(st.document("triage", "failures/2026-11-20", "text/markdown").unwrap().unwrap().body, "# replaced");
    assert!(st.document("triage", "failures/2026-11-20", "application/json").unwrap().is_none());
    assert!(st.documents(Some("payload")).unwrap().is_empty());
}

#[test]
fn migrating_a_version_5_store_backfills_failed_counts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.db");
    {
        let mut st = Store::open(&path).unwrap();
        st.put_build(&build(
            "ci-x",
            "1",
            100,
            vec![test("b", "failed", Some("boom")), test("a", "passed", None)],
            vec![],
        ))
        .unwrap();
    }
    // Take the file back to version 5 as an older citriage left it.
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "DROP INDEX builds_by_started; DROP INDEX test_results_failed;
             DROP TABLE build_excerpts; DROP TABLE cluster_runs; DROP TABLE cluster_members; DROP TABLE cluster_daily;
             DROP TABLE documents; DROP TABLE cluster_failure_ids; DROP TABLE cluster_subpatterns; DROP TABLE ingest_sources;
             DROP TABLE record_transitions; DROP TABLE record_links; DROP TABLE records;
             ALTER TABLE builds DROP COLUMN failed_tests; ALTER TABLE builds DROP COLUMN kettle;
             ALTER TABLE builds DROP COLUMN testgrid; ALTER TABLE builds DROP COLUMN sources; DROP TABLE testgrid_tabs;
             DROP TABLE build_versions;
             DROP TABLE alert_outbox_items; DROP TABLE alert_outbox; DROP TABLE alerts; DROP TABLE alert_states;
             ALTER TABLE clusters DROP COLUMN text; ALTER TABLE clusters DROP COLUMN spans;
             ALTER TABLE clusters DROP COLUMN owner; ALTER TABLE clusters DROP COLUMN signatures;
             ALTER TABLE clusters DROP COLUMN tests; ALTER TABLE clusters DROP COLUMN jobs;
             ALTER TABLE clusters DROP COLUMN run_as_of; PRAGMA user_version = 5;",
        )
        .unwrap();
    }
    let st = Store::open(&path).unwrap();
    assert_eq!(st.schema_version().unwrap(), SCHEMA_VERSION);
    let index = st.build_index().unwrap();
    assert_eq!(index[0].failed_tests, 1);
    assert_eq!(index[0].record.kettle, None, "builds stored before migration 10 have no kettle reading");
}
