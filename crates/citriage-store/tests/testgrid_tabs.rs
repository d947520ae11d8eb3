//! TestGrid tabs and their builds on both engines: a tab is written whole or not at
//! all, a build TestGrid and GCS both show stays one row (the merge rule decides its
//! fields; its tests are kept when asked), TestGrid's facts read back, rewriting the
//! same tab changes nothing, and both engines end with the same content.

mod common;

use citriage_model::build::{BuildRecord, StoredTest, TestgridFacts};
use citriage_store::{BuildWrite, Store, StoredBuildHead, TestgridTab};

fn test(name: &str, status: &str) -> StoredTest {
    StoredTest {
        file: String::new(),
        suite: String::new(),
        classname: String::new(),
        name: name.into(),
        status: status.into(),
        duration: None,
        failure_text: (status == "failed").then(|| format!("{name} failed")),
        attempt: 0,
        informing: false,
        kettle_name: None,
    }
}

fn build(id: u32, origin: &str, tests: Vec<StoredTest>) -> BuildRecord {
    BuildRecord {
        bucket: "origin-ci-test".into(),
        path: format!("logs/job-a/{id}"),
        job: "job-a".into(),
        build_id: id.to_string(),
        kind: "periodic".into(),
        pr: None,
        commit_sha: None,
        repo_commit: None,
        repo_version: None,
        repos: None,
        started: Some(1_585_000_000 + i64::from(id) * 3600),
        finished: None,
        duration: None,
        result: Some("SUCCESS".into()),
        state: None,
        executor: None,
        origin: origin.into(),
        problems: Vec::new(),
        complete: true,
        tests,
        artifacts: Vec::new(),
        excerpts: Vec::new(),
        kettle: None,
        testgrid: None,
        versions: Vec::new(),
    }
}

fn facts(b: &BuildRecord) -> TestgridFacts {
    TestgridFacts {
        dashboard: "dash".into(),
        tab: "tab-a".into(),
        result: b.result.clone(),
        started: b.started,
        commit: None,
        tests: b.tests.len() as u64,
        failed: b.tests.iter().filter(|t| t.status == "failed").count() as u64,
    }
}

/// A small rule: a TestGrid build over a stored GCS build keeps the GCS fields and
/// tests and adds the facts; an identical stored TestGrid build is left alone.
fn rule(b: &BuildRecord, stored: Option<&StoredBuildHead>) -> BuildWrite {
    let f = facts(b);
    match stored {
        Some(s) if s.record.origin == "gcs" => {
            BuildWrite::StoredWith { head: Box::new(s.record.clone()), testgrid: Some(f) }
        }
        Some(s) if s.testgrid.as_ref() == Some(&f) => BuildWrite::Unchanged,
        _ => BuildWrite::Incoming { extra_problems: Vec::new(), testgrid: Some(f) },
    }
}

fn tab(sha: &str) -> TestgridTab {
    TestgridTab {
        dashboard: "dash".into(),
        tab: "tab-a".into(),
        test_group: Some("group-a".into()),
        query: Some("origin-ci-test/logs/job-a".into()),
        bucket: "origin-ci-test".into(),
        job: "job-a".into(),
        meta: r#"{"stale_test_threshold":10}"#.into(),
        columns: 3,
        rows: 2,
        status_counts: r#"{"FAIL":1,"PASS":5}"#.into(),
        sha256: sha.into(),
        read_at: 1_585_400_000,
    }
}

fn tab_builds() -> Vec<BuildRecord> {
    (1..=3)
        .map(|i| build(i, "testgrid", vec![test("t1", "passed"), test("t2", if i == 2 { "failed" } else { "passed" })]))
        .collect()
}

fn put(
    st: &mut Store,
    sha: &str,
    merge: &mut dyn FnMut(&BuildRecord, Option<&StoredBuildHead>) -> BuildWrite,
) -> Result<citriage_store::TabWritten, citriage_store::StoreError> {
    let builds = tab_builds();
    st.put_testgrid_tab(&tab(sha), builds.len(), &mut |i| builds[i].clone(), merge)
}

#[test]
fn tabs_are_stored_whole_and_merged_with_gcs_builds() {
    let mut digests = Vec::new();
    for f in common::backends("tabs_are_stored_whole_and_merged_with_gcs_builds") {
        let mut st: Store = f.open();
        // GCS has build 2 with three tests of its own.
        let gcs = build(2, "gcs", vec![test("a", "passed"), test("b", "failed"), test("c", "passed")]);
        st.put_build(&gcs).unwrap();
        let w = put(&mut st, "s1", &mut rule).unwrap();
        assert_eq!((w.written, w.unchanged), (3, 0), "{}", f.name);
        assert_eq!(st.build_counts().unwrap().0, 3, "{}: one row per build", f.name);
        // Build 2 kept its GCS fields and tests, and carries TestGrid's facts.
        let head = st.build_head("origin-ci-test", "logs/job-a/2").unwrap().unwrap();
        assert_eq!(head.record.origin, "gcs");
        assert_eq!(head.testgrid.as_ref().map(|t| (t.tests, t.failed)), Some((2, 1)), "{}", f.name);
        let stored = st.job_builds_with_tests("job-a", None).unwrap();
        let names: Vec<Vec<&str>> = stored.iter().map(|b| b.tests.iter().map(|t| t.name.as_str()).collect()).collect();
        assert_eq!(names, [vec!["t1", "t2"], vec!["a", "b", "c"], vec!["t1", "t2"]], "{}", f.name);
        // A build only TestGrid shows is not complete for GCS ingestion.
        assert!(!st.has_complete_build("origin-ci-test", "logs/job-a/1").unwrap());
        assert!(st.has_complete_build("origin-ci-test", "logs/job-a/2").unwrap());
        assert_eq!(st.testgrid_tabs().unwrap(), [tab("s1")], "{}", f.name);
        // The same tab again: nothing changes.
        let digest = st.content_digest().unwrap();
        let w = put(&mut st, "s1", &mut rule).unwrap();
        assert_eq!((w.written, w.unchanged), (1, 2), "{}: the merged build is rewritten, the others left", f.name);
        assert_eq!(st.content_digest().unwrap(), digest, "{}", f.name);
        digests.push((f.name, digest));
    }
    for w in digests.windows(2) {
        assert_eq!(w[0].1, w[1].1, "{} and {} differ", w[0].0, w[1].0);
    }
}

#[test]
fn a_tab_that_fails_part_way_stores_nothing() {
    for f in common::backends("a_tab_that_fails_part_way_stores_nothing") {
        let mut st: Store = f.open();
        let before = st.content_digest().unwrap();
        // The third build asks to keep the tests of a build that is not stored: the
        // transaction fails after two builds were written in it.
        let mut failing = |b: &BuildRecord, s: Option<&StoredBuildHead>| {
            if b.build_id == "3" {
                BuildWrite::StoredWith { head: Box::new(b.clone()), testgrid: None }
            } else {
                rule(b, s)
            }
        };
        let e = put(&mut st, "s2", &mut failing).unwrap_err();
        assert!(e.to_string().contains("logs/job-a/3"), "{}: {e}", f.name);
        assert_eq!(st.build_counts().unwrap(), (0, 0, 0), "{}", f.name);
        assert!(st.testgrid_tabs().unwrap().is_empty(), "{}", f.name);
        assert_eq!(st.content_digest().unwrap(), before, "{}", f.name);
        // The interned names the failed attempt learnt are not taken for stored ones.
        put(&mut st, "s2", &mut rule).unwrap();
        assert_eq!(st.build_counts().unwrap().1, 6, "{}", f.name);
    }
}
