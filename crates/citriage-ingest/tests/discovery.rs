//! Build discovery three ways over the same synthetic world — bucket listing, Deck's
//! recorded job-history pages with `buildId` pagination, and `latest-build.txt` for
//! incremental runs — plus malformed artifacts recorded on the build, never a pass.

use citriage_ingest::{build_paths, discover_jobs, history_build_paths, ingest_jobs, latest_build, IngestOptions};
use citriage_sources::artifacts::LocalMirror;
use citriage_sources::deck::DeckPages;
use citriage_store::Store;

const BUCKET: &str = "kubernetes-ci-logs";

fn world() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w");
    let mut p = citriage_synth::SynthParams::preset("tiny").unwrap();
    p.payloads = 0;
    citriage_synth::generate(&p, &w, &mut |_| {}).unwrap();
    (dir, w)
}

#[test]
fn deck_history_lists_what_the_bucket_lists() {
    let (_keep, w) = world();
    let src = LocalMirror::new(w.join("gcs").join(BUCKET), BUCKET);
    let deck = DeckPages::local(w.join("prow"));
    let mut compared = 0;
    let mut paged = 0;
    for job in discover_jobs(&src).unwrap() {
        let listed = build_paths(&src, &job).unwrap();
        let history = history_build_paths(&deck, BUCKET, &job, 1000).unwrap();
        // Deck lists builds that have a GCS folder; every listed folder is in the history.
        for p in &listed {
            assert!(history.contains(p), "{job}: {p} missing from the job history");
        }
        if listed.len() > 20 {
            paged += 1;
        }
        compared += listed.len();
        let one_page = history_build_paths(&deck, BUCKET, &job, 1).unwrap();
        assert!(one_page.len() <= 20, "one page holds at most 20 builds");
    }
    assert!(compared > 100 && paged > 0, "{compared} builds, {paged} jobs needing several pages");
}

#[test]
fn incremental_skips_jobs_with_nothing_new() {
    let (_keep, w) = world();
    let src = LocalMirror::new(w.join("gcs").join(BUCKET), BUCKET);
    let jobs = discover_jobs(&src).unwrap();
    let with_latest: Vec<String> = jobs.iter().filter(|j| latest_build(&src, j).unwrap().is_some()).cloned().collect();
    assert!(!with_latest.is_empty());
    let mut st = Store::open_in_memory().unwrap();
    ingest_jobs(&src, &mut st, &jobs, &IngestOptions::default(), &|_| {}).unwrap();
    let opts = IngestOptions { incremental: true, ..IngestOptions::default() };
    let s = ingest_jobs(&src, &mut st, &jobs, &opts, &|_| {}).unwrap();
    // A job is skipped when its latest build is stored complete (a running build is not).
    let skipped = |j: &String| {
        latest_build(&src, j)
            .unwrap()
            .is_some_and(|id| st.has_complete_build(BUCKET, &format!("logs/{j}/{id}")).unwrap())
    };
    let skipped_jobs = jobs.iter().filter(|j| skipped(j)).count();
    assert!(skipped_jobs > 0 && with_latest.len() >= skipped_jobs);
    let unskippable: usize = jobs.iter().filter(|j| !skipped(j)).map(|j| build_paths(&src, j).unwrap().len()).sum();
    assert_eq!(s.builds_found, unskippable, "jobs whose latest build is stored were not even listed");
    let running = st.builds(None).unwrap().iter().filter(|b| !b.complete).count();
    assert_eq!(s.builds_stored, running, "only builds still running are fetched again");
    assert_eq!(s.builds_skipped, unskippable - running);
}

#[test]
fn malformed_artifacts_are_recorded_never_passing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join(BUCKET);
    let b = root.join("logs/ci-x/100");
    std::fs::create_dir_all(b.join("artifacts/sub")).unwrap();
    std::fs::write(b.join("started.json"), br#"{"timestamp": 1795000000, "repo-commit": "abc"}"#).unwrap();
    std::fs::write(b.join("finished.json"), br#"{"timestamp": 17950"#).unwrap();
    std::fs::write(
        b.join("artifacts/junit_01.xml"),
        b"<testsuite><testcase name=\"a\"><failure>boom</failure></testcase>",
    )
    .unwrap();
    std::fs::write(b.join("artifacts/sub/junit_02.xml"), b"\x1f\x8bnot really gzip").unwrap();
    let c = root.join("logs/ci-x/101");
    std::fs::create_dir_all(&c).unwrap();
    std::fs::write(c.join("finished.json"), br#"{"timestamp": 1795000100, "passed": true, "result": "SUCCESS"}"#)
        .unwrap();
    let src = LocalMirror::new(&root, BUCKET);
    let mut st = Store::open_in_memory().unwrap();
    let s = ingest_jobs(&src, &mut st, &["ci-x".to_string()], &IngestOptions::default(), &|_| {}).unwrap();
    // The corrupt gzip is a source error for that build; the other build still lands.
    assert_eq!(s.builds_found, 2);
    let builds = st.builds(None).unwrap();
    let mut stored: Vec<&str> = builds.iter().map(|b| b.build_id.as_str()).collect();
    stored.sort();
    if s.failures.is_empty() {
        // The corrupt gzip is then a problem recorded on its build.
        assert_eq!(stored, vec!["100", "101"]);
        let b100 = builds.iter().find(|b| b.build_id == "100").unwrap();
        assert!(b100.problems.iter().any(|p| p.contains("junit_02.xml") && p.contains("gzip")), "{:?}", b100.problems);
    } else {
        assert!(
            s.failures[0].reason.contains("junit_02.xml") && s.failures[0].reason.contains("gzip"),
            "{:?}",
            s.failures
        );
        assert_eq!(stored, vec!["101"]);
    }
    for b in &builds {
        if b.build_id == "100" {
            assert_eq!(b.result.as_deref(), Some("ERROR"), "an unreadable finished.json is never a pass");
            assert!(
                b.problems.iter().any(|p| p.contains("finished.json") && p.contains("truncated")),
                "{:?}",
                b.problems
            );
            assert!(
                b.problems.iter().any(|p| p.contains("junit_01.xml") && p.contains("truncated")),
                "{:?}",
                b.problems
            );
        } else {
            assert!(b.problems.iter().any(|p| p.contains("started.json: missing")), "{:?}", b.problems);
            assert_eq!(b.result.as_deref(), Some("SUCCESS"));
        }
    }
}
