//! Failure-line excerpts stored at ingest: on a synthetic world they cover the error
//! lines its truth planted in failed builds' `build-log.txt`, with exact line numbers;
//! passing builds get none; re-ingesting changes nothing. Local fixture builds cover a
//! gzipped log (gzip content and `build-log.txt.gz`), a missing log, a corrupt gzip, a
//! binary log, binary junk inside a text log, a 100 MB single line, the size limit and
//! excerpts turned off.

use citriage_ingest::excerpts::ExcerptLimits;
use citriage_ingest::{discover_jobs, fetch_build, ingest_jobs, IngestOptions, IngestSummary};
use citriage_model::build::{BuildRecord, LogExcerpt};
use citriage_patterns::extract::{self, ExtractConfig};
use citriage_patterns::lines;
use citriage_sources::artifacts::LocalMirror;
use citriage_store::Store;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

const BUCKET: &str = "kubernetes-ci-logs";

fn world() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w");
    let mut p = citriage_synth::SynthParams::preset("tiny").unwrap();
    p.payloads = 0;
    citriage_synth::generate(&p, &w, &mut |_| {}).unwrap();
    (dir, w)
}

/// Every stored build with its excerpts, by path.
fn stored(store: &mut Store) -> BTreeMap<String, BuildRecord> {
    let mut out = BTreeMap::new();
    for job in store.build_jobs().unwrap() {
        for b in store.job_builds_with_tests(&job, None).unwrap() {
            out.insert(b.path.clone(), b);
        }
    }
    out
}

/// The cleaned text of lines `start..=end` (1-based) of a log, read independently.
fn log_lines(log: &[u8], start: u32, end: u32) -> String {
    lines::lines(log)
        .filter(|l| (start as usize..=end as usize).contains(&l.number))
        .map(|l| extract::clean(l.bytes(log), lines::DEFAULT_MATCH_CAP))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn excerpts_cover_planted_error_lines_of_failed_builds() {
    let (_keep, w) = world();
    let root = w.join("gcs").join(BUCKET);
    let src = LocalMirror::new(&root, BUCKET);
    let jobs = discover_jobs(&src).unwrap();
    let db = w.with_extension("db");
    let mut store = Store::open(&db).unwrap();
    let summary = ingest_jobs(&src, &mut store, &jobs, &IngestOptions::default(), &|_| {}).unwrap();
    assert!(summary.failures.is_empty(), "{:?}", summary.failures);
    let builds = stored(&mut store);
    assert_eq!(summary.excerpts_stored, builds.values().map(|b| b.excerpts.len()).sum::<usize>());

    let limits = ExcerptLimits::default();
    let mut failed_with_excerpts = 0;
    for b in builds.values() {
        match b.result.as_deref() {
            Some("FAILURE" | "ERROR") => failed_with_excerpts += usize::from(!b.excerpts.is_empty()),
            _ => assert!(b.excerpts.is_empty(), "{} ({:?}) has excerpts", b.path, b.result),
        }
        assert!(b.excerpts.len() <= limits.max_excerpts, "{}: {} excerpts", b.path, b.excerpts.len());
        if b.excerpts.is_empty() {
            continue;
        }
        let log = std::fs::read(root.join(&b.path).join("build-log.txt")).unwrap();
        for e in &b.excerpts {
            assert_eq!(e.source, "build-log.txt");
            assert!(e.text.len() <= limits.max_excerpt_bytes, "{}: {} bytes", b.path, e.text.len());
            assert!(1 <= e.line_start && e.line_start <= e.line_end, "{}: {e:?}", b.path);
            assert_eq!(e.text, log_lines(&log, e.line_start, e.line_end), "{}: text and lines disagree", b.path);
        }
        assert!(b.excerpts.windows(2).all(|p| p[0].line_end < p[1].line_start), "{}: in log order", b.path);
    }
    assert!(failed_with_excerpts > 0);

    // The truth: planted error lines per build, and each pattern's signature.
    let truth: Value = serde_json::from_slice(&std::fs::read(w.join("truth.json")).unwrap()).unwrap();
    let signatures: BTreeMap<String, String> = truth["patterns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap().to_string(), p["signature"].as_str().unwrap().to_string()))
        .collect();
    let prefix = format!("gcs/{BUCKET}/");
    let uncapped = ExtractConfig { max_excerpts: usize::MAX, ..ExtractConfig::default() };
    let (mut planted, mut covered, mut exact, mut builds_checked) = (0usize, 0usize, 0usize, 0usize);
    let (mut found_by_extractor, mut compared_builds, mut builds_found) = (0usize, 0usize, 0usize);
    for line in std::fs::read_to_string(w.join("truth/builds.jsonl")).unwrap().lines() {
        let t: Value = serde_json::from_str(line).unwrap();
        let Some(path) = t["path"].as_str() else { continue };
        let rel = path.strip_prefix(&prefix).unwrap_or_else(|| panic!("{path}: not under {prefix}"));
        let Some(b) = builds.get(rel) else { panic!("{rel}: in the truth, not in the store") };
        if !matches!(b.result.as_deref(), Some("FAILURE" | "ERROR")) {
            continue;
        }
        // What the extractor itself selects in this log, with no cap on excerpts.
        let log = std::fs::read(root.join(rel).join("build-log.txt")).unwrap();
        let direct = extract::extract_log(&log, None, "build-log.txt", &uncapped);
        let caps_bind = direct.excerpts.len() > limits.max_excerpts
            || direct.excerpts.iter().map(|e| e.text.len()).sum::<usize>() > limits.max_total_bytes;
        let (mut stored_lines, mut direct_lines, mut planted_here) = (Vec::new(), Vec::new(), 0usize);
        for c in t["causes"].as_array().unwrap() {
            let Some(log) = c.get("log").filter(|l| l["file"].as_str().is_some_and(|f| f.ends_with("/build-log.txt")))
            else {
                continue;
            };
            let signature = &signatures[c["pattern"].as_str().unwrap()];
            for l in log["error_lines"].as_array().unwrap() {
                let l = l.as_u64().unwrap() as u32;
                planted += 1;
                planted_here += 1;
                if direct.excerpts.iter().any(|e| e.line_start <= l as usize && l as usize <= e.line_end) {
                    found_by_extractor += 1;
                    direct_lines.push(l);
                }
                if let Some(e) = b.excerpts.iter().find(|e| e.line_start <= l && l <= e.line_end) {
                    covered += 1;
                    stored_lines.push(l);
                    let text_line = e.text.lines().nth((l - e.line_start) as usize).unwrap_or("");
                    exact += usize::from(text_line.contains(signature.as_str()));
                }
            }
        }
        if !caps_bind {
            // Within the caps, ingest keeps every planted line the extractor selects.
            assert_eq!(stored_lines, direct_lines, "{rel}");
            compared_builds += 1;
        }
        builds_checked += usize::from(planted_here > 0);
        builds_found += usize::from(!stored_lines.is_empty());
    }
    assert!(builds_checked >= 10 && planted >= builds_checked, "{builds_checked} builds, {planted} lines");
    assert!(compared_builds * 2 >= builds_checked, "{compared_builds} of {builds_checked} builds within the caps");
    let recall = covered as f64 / planted as f64;
    let extractor_recall = found_by_extractor as f64 / planted as f64;
    eprintln!(
        "planted error lines covered: {covered}/{planted} ({recall:.3}) over {builds_checked} failed builds \
         ({builds_found} with at least one); the extractor alone, uncapped: {found_by_extractor} ({extractor_recall:.3})"
    );
    // The caps may only cost a few lines the extractor finds.
    assert!(
        covered as f64 >= 0.97 * found_by_extractor as f64,
        "stored excerpts cover {covered} planted lines, the uncapped extractor {found_by_extractor}"
    );
    // Absolute recall is bounded by the extractor without a passing log: it leaves out
    // `go test` messages printed before their `--- FAIL:` line, lone level-2 error lines
    // (`E...` klog lines, `Error response from daemon`, `Unable to ...`) far from a
    // definite failure, the verdict or the end of the log, and `WARNING: DATA RACE`
    // (read as an informational line). About four in five planted lines remain.
    assert!(recall >= 0.75, "recall {recall:.3}: {covered} of {planted} planted error lines covered");
    // A covered line's text in the excerpt is the planted line: line numbers are exact.
    assert_eq!(exact, covered, "every covered error line carries its signature at its own line");
}

#[test]
fn reingest_gives_the_same_excerpts() {
    let (_keep, w) = world();
    let root = w.join("gcs").join(BUCKET);
    let src = LocalMirror::new(&root, BUCKET);
    let jobs = discover_jobs(&src).unwrap();
    let mut store = Store::open(&w.with_extension("db")).unwrap();
    ingest_jobs(&src, &mut store, &jobs, &IngestOptions::default(), &|_| {}).unwrap();
    let excerpts = |st: &Store| {
        let mut v = Vec::new();
        st.for_each_excerpt(None, |b, e| v.push((b, e.clone()))).unwrap();
        v
    };
    let first = excerpts(&store);
    assert!(!first.is_empty());
    let s = ingest_jobs(&src, &mut store, &jobs, &IngestOptions::default(), &|_| {}).unwrap();
    assert!(s.builds_skipped > 0);
    assert_eq!(excerpts(&store), first, "a resumed run changes no excerpt");
    // Storing every failed build again replaces its excerpts, never adds to them.
    let before = stored(&mut store);
    let mut again = 0;
    for b in before.values().filter(|b| !b.excerpts.is_empty()) {
        let fresh = fetch_build(&src, &b.job, &b.path).unwrap();
        assert_eq!(fresh.excerpts, b.excerpts, "{}: the same log gives the same excerpts", b.path);
        store.put_build(&fresh).unwrap();
        again += 1;
    }
    assert!(again > 0);
    let after = stored(&mut store);
    for (p, b) in &before {
        assert_eq!(after[p].excerpts, b.excerpts, "{p}");
    }
    assert_eq!(excerpts(&store).len(), first.len(), "no duplicates");
}

/// A build folder with `finished.json` of the given result, `started.json`, and files.
fn fixture_build(root: &Path, job: &str, id: u64, result: &str, files: &[(&str, &[u8])]) {
    let b = root.join(format!("logs/{job}/{id}"));
    std::fs::create_dir_all(&b).unwrap();
    std::fs::write(b.join("started.json"), format!(r#"{{"timestamp": {}, "repo-commit": "abc"}}"#, 1_795_000_000 + id))
        .unwrap();
    std::fs::write(
        b.join("finished.json"),
        format!(r#"{{"timestamp": {}, "passed": {}, "result": "{result}"}}"#, 1_795_000_100 + id, result == "SUCCESS"),
    )
    .unwrap();
    for (name, bytes) in files {
        std::fs::write(b.join(name), bytes).unwrap();
    }
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// A small failed log: lines 4 to 7 state the failure.
const LOG: &[u8] = b"I1121 04:15:30.123456 starting\n\
+ make test\n\
ok  \tk8s.io/a\t0.1s\n\
--- FAIL: TestWidget (0.20s)\n\
    widget_test.go:42: expected 3, got 4\n\
FAIL\tk8s.io/b\t0.3s\n\
make: *** [Makefile:10: test] Error 1\n";

fn ingest_fixture(root: &Path, job: &str, opts: &IngestOptions) -> (IngestSummary, BTreeMap<String, BuildRecord>) {
    let src = LocalMirror::new(root, BUCKET);
    let mut store = Store::open(&root.with_extension("db")).unwrap();
    let s = ingest_jobs(&src, &mut store, &[job.to_string()], opts, &|_| {}).unwrap();
    (s, stored(&mut store))
}

#[test]
fn gzipped_missing_and_passing_logs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join(BUCKET);
    fixture_build(&root, "ci-gz", 1, "FAILURE", &[("build-log.txt", LOG)]);
    fixture_build(&root, "ci-gz", 2, "FAILURE", &[("build-log.txt", &gzip(LOG))]);
    fixture_build(&root, "ci-gz", 3, "FAILURE", &[("build-log.txt.gz", &gzip(LOG))]);
    fixture_build(&root, "ci-gz", 4, "FAILURE", &[]);
    fixture_build(&root, "ci-gz", 5, "SUCCESS", &[("build-log.txt", LOG)]);
    fixture_build(&root, "ci-gz", 6, "ERROR", &[("build-log.txt", LOG)]);
    let (s, builds) = ingest_fixture(&root, "ci-gz", &IngestOptions::default());
    assert!(s.failures.is_empty(), "{:?}", s.failures);
    let get = |id: u64| &builds[&format!("logs/ci-gz/{id}")];
    let plain = &get(1).excerpts;
    // Lines 4 to 7 state the failure one after the other: one excerpt.
    let want = LogExcerpt { source: "build-log.txt".into(), line_start: 4, line_end: 7, text: log_lines(LOG, 4, 7) };
    assert_eq!(plain, &vec![want], "{plain:?}");
    assert!(plain[0].text.starts_with("--- FAIL: TestWidget") && plain[0].text.contains("expected 3, got 4"));
    assert_eq!(&get(2).excerpts, plain, "gzip content is inflated");
    let renamed: Vec<LogExcerpt> =
        plain.iter().map(|e| LogExcerpt { source: "build-log.txt.gz".into(), ..e.clone() }).collect();
    assert_eq!(get(3).excerpts, renamed, "build-log.txt.gz is read and named as it is");
    assert_eq!(&get(6).excerpts, plain, "ERROR builds are excerpted too");
    assert!(get(4).excerpts.is_empty() && get(4).problems.is_empty(), "a missing log is no problem");
    assert!(get(5).excerpts.is_empty(), "a passing build's log is not excerpted");
    for id in 1..=6 {
        assert!(get(id).problems.is_empty(), "{id}: {:?}", get(id).problems);
    }

    // Turned off, failed builds get none.
    let off = IngestOptions { log_excerpts: None, ..IngestOptions::default() };
    let root2 = dir.path().join("off").join(BUCKET);
    fixture_build(&root2, "ci-gz", 1, "FAILURE", &[("build-log.txt", LOG)]);
    let (s, builds) = ingest_fixture(&root2, "ci-gz", &off);
    assert_eq!(s.builds_stored, 1);
    assert_eq!(s.excerpts_stored, 0);
    assert!(builds["logs/ci-gz/1"].excerpts.is_empty());
}

#[test]
fn bad_logs_are_problems_not_errors() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join(BUCKET);
    let gz = gzip(LOG);
    let truncated = &gz[..gz.len() / 2];
    let binary: Vec<u8> = (0..200_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    // Text with binary junk lines before the failure: still excerpted, lines exact.
    let mut junky = b"starting\n".to_vec();
    junky.extend_from_slice(b"\x00\x01\xff\xfe garbage \x1b[31m\x80\x81\n\x00\x00\x00\n");
    junky.extend_from_slice(b"--- FAIL: TestJunk (0.10s)\n    junk_test.go:9: boom\n");
    fixture_build(&root, "ci-bad", 1, "FAILURE", &[("build-log.txt.gz", truncated)]);
    fixture_build(&root, "ci-bad", 2, "FAILURE", &[("build-log.txt", &binary)]);
    fixture_build(&root, "ci-bad", 3, "FAILURE", &[("build-log.txt", &junky)]);
    fixture_build(&root, "ci-bad", 4, "FAILURE", &[("build-log.txt", LOG)]);
    // A log over the read limit is not read.
    let limits = ExcerptLimits { max_log_bytes: (LOG.len() - 1) as u64, ..ExcerptLimits::default() };
    let (s, builds) = ingest_fixture(&root, "ci-bad", &IngestOptions::default());
    assert!(s.failures.is_empty(), "bad logs never fail a build: {:?}", s.failures);
    assert_eq!(s.builds_stored, 4);
    let get = |id: u64| &builds[&format!("logs/ci-bad/{id}")];
    let p1 = &get(1).problems;
    assert!(p1.len() == 1 && p1[0].contains("build-log.txt.gz") && p1[0].contains("gzip"), "{p1:?}");
    assert!(get(1).excerpts.is_empty());
    let p2 = &get(2).problems;
    assert!(p2.len() == 1 && p2[0].contains("build-log.txt") && p2[0].contains("binary"), "{p2:?}");
    assert!(get(2).excerpts.is_empty());
    assert!(get(3).problems.is_empty(), "{:?}", get(3).problems);
    let e3 = &get(3).excerpts;
    assert!(e3.iter().any(|e| e.line_start == 4 && e.text.starts_with("--- FAIL: TestJunk")), "{e3:?}");
    assert_eq!(s.builds_with_problems, 2);

    let root2 = dir.path().join("limit").join(BUCKET);
    fixture_build(&root2, "ci-bad", 4, "FAILURE", &[("build-log.txt", LOG)]);
    let opts = IngestOptions { log_excerpts: Some(limits), ..IngestOptions::default() };
    let (_, builds) = ingest_fixture(&root2, "ci-bad", &opts);
    let b = &builds["logs/ci-bad/4"];
    assert!(b.excerpts.is_empty());
    assert!(b.problems.len() == 1 && b.problems[0].contains("larger than"), "{:?}", b.problems);
}

#[test]
fn a_100_mb_line_stays_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join(BUCKET);
    const MB100: usize = 100 << 20;
    // One 100 MB line that states a failure, then a failing test on line 2.
    let mut huge = b"panic: runtime error: ".to_vec();
    huge.resize(MB100, b'x');
    huge.extend_from_slice(b"\n--- FAIL: TestAfterHugeLine (1.00s)\n");
    fixture_build(&root, "ci-huge", 1, "FAILURE", &[("build-log.txt", &huge)]);
    // One 100 MB line with no line end at all.
    let mut endless = b"E1121 04:15:30.123456 1 err.go:1] failed: ".to_vec();
    endless.resize(MB100, b'y');
    fixture_build(&root, "ci-huge", 2, "FAILURE", &[("build-log.txt", &endless)]);
    drop((huge, endless));
    let limits = ExcerptLimits::default();
    let (s, builds) = ingest_fixture(&root, "ci-huge", &IngestOptions { concurrency: 1, ..IngestOptions::default() });
    assert!(s.failures.is_empty(), "{:?}", s.failures);
    let b1 = &builds["logs/ci-huge/1"];
    assert!(b1.excerpts.iter().any(|e| e.line_start == 2 && e.text.starts_with("--- FAIL: TestAfterHugeLine")));
    // The 100 MB line lies before the analysed tail, so it is not part of an excerpt.
    assert!(b1.excerpts.iter().all(|e| e.line_start >= 2), "{:?}", b1.excerpts);
    for b in builds.values() {
        assert!(b.problems.is_empty(), "{}: {:?}", b.path, b.problems);
        assert!(b.excerpts.len() <= limits.max_excerpts);
        for e in &b.excerpts {
            assert!(e.text.len() <= limits.max_excerpt_bytes, "{}: {} bytes", b.path, e.text.len());
        }
    }
    // The endless line is analysed from inside its tail, whose first 4 KiB (all that is
    // matched of a line) state no failure: stored, without excerpts or problems.
    let b2 = &builds["logs/ci-huge/2"];
    assert!(b2.excerpts.is_empty(), "{:?}", b2.excerpts);
    assert_eq!(s.builds_stored, 2);
}
