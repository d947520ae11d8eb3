//! A JUnit file larger than the whole memory budget is still read from a local mirror:
//! the reader takes it as a stream, a piece at a time, so only its buffers are held.
//! A gzip JUnit file is inflated as it is read, and one that inflates past the size
//! limit is a problem naming the file and the limit; a log larger than the budget
//! still gives its excerpts, with their line numbers in the whole log. One test (the
//! budget is the process's), in its own test binary.

use citriage_ingest::{ingest_jobs, IngestOptions};
use citriage_sources::artifacts::LocalMirror;
use citriage_sources::http;
use citriage_store::Store;
use std::io::Write;

#[test]
fn a_junit_file_larger_than_the_budget_is_streamed() {
    http::set_memory_budget(2 << 20);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("bucket");
    let build = |id: u32, name: &str, bytes: &[u8]| {
        let b = root.join(format!("logs/ci-big/{id}"));
        std::fs::create_dir_all(b.join("artifacts")).unwrap();
        std::fs::write(b.join("started.json"), format!(r#"{{"timestamp": {}}}"#, 1_764_000_000 + id)).unwrap();
        std::fs::write(
            b.join("finished.json"),
            format!(r#"{{"timestamp": {}, "result": "FAILURE"}}"#, 1_764_000_600 + id),
        )
        .unwrap();
        std::fs::write(b.join("artifacts").join(name), bytes).unwrap();
    };
    // 8 MiB of <system-out> and a failure body of 3 MiB, four times the budget.
    let mut xml =
        String::from("<testsuite name=\"big\">\n<testcase name=\"quiet\"/>\n<testcase name=\"chatty\"><system-out>");
    while xml.len() < 8 << 20 {
        xml.push_str("a line of output that goes on and on and on\n");
    }
    xml.push_str("</system-out><failure message=\"boom\">");
    while xml.len() < 11 << 20 {
        xml.push_str("stack frame\n");
    }
    xml.push_str("last frame</failure></testcase>\n<testcase name=\"after\"/>\n</testsuite>\n");
    build(1, "junit_big.xml", xml.as_bytes());
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(xml.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    build(2, "junit_big.xml", &gz);
    let mut log = String::new();
    let mut lines = 0;
    while log.len() < 5 << 20 {
        log.push_str("I1126 12:00:00 all is well so far, nothing to see here\n");
        lines += 1;
    }
    log.push_str("--- FAIL: TestTheEnd (1.00s)\n");
    std::fs::write(root.join("logs/ci-big/1/build-log.txt"), &log).unwrap();

    let src = LocalMirror::new(&root, "b");
    let mut st = Store::open_in_memory().unwrap();
    let opts = IngestOptions { concurrency: 2, ..IngestOptions::default() };
    let s = ingest_jobs(&src, &mut st, &["ci-big".into()], &opts, &|_| {}).unwrap();
    assert!(s.failures.is_empty(), "{:?}", s.failures);
    for id in ["1", "2"] {
        let b = st.job_builds_with_tests("ci-big", None).unwrap().into_iter().find(|b| b.build_id == id).unwrap();
        assert!(b.problems.is_empty(), "build {id}: {:?}", b.problems);
        let names: Vec<&str> = b.tests.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["quiet", "chatty", "after"], "build {id}");
        let text = b.tests[1].failure_text.as_deref().unwrap_or_default();
        assert!(text.starts_with("boom\nstack frame") && text.ends_with("last frame"), "build {id}: {text:.80}");
    }
    let b1 = st.job_builds_with_tests("ci-big", None).unwrap().into_iter().find(|b| b.build_id == "1").unwrap();
    let ex = b1.excerpts.iter().find(|e| e.text.contains("TestTheEnd")).expect("the log's failure is excerpted");
    assert_eq!(ex.line_start, lines + 1);
}
