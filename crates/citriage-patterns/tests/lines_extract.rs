//! Line splitting over hostile input and failure-line extraction on small hand-written logs.

use std::io::BufReader;

use citriage_patterns::extract::{
    extract_junit, extract_log, marker_regex, scan_markers, ExtractConfig, Selection, SPYGLASS_HIGHLIGHT,
};
use citriage_patterns::lines::{clean_line, count_lines, lines, split_lines, StreamLines};

#[test]
fn crlf_lone_cr_and_lf_each_end_a_line() {
    let d = b"a\r\nb\rc\n\nd\r\r\ne";
    let got: Vec<&[u8]> = lines(d).map(|l| l.bytes(d)).collect();
    assert_eq!(got, vec![&b"a"[..], b"b", b"c", b"", b"d", b"", b"e"]);
    let nums: Vec<usize> = lines(d).map(|l| l.number).collect();
    assert_eq!(nums, (1..=7).collect::<Vec<_>>());
    assert_eq!(count_lines(d), 7);
}

#[test]
fn ansi_and_binary_junk_are_cleaned() {
    let raw = b"\x1b[1;31mERROR\x1b[0m: \x00\x01bad \xff\xfe bytes\x1b]0;t\x07 end   ";
    let t = clean_line(raw, 4096);
    assert!(t.starts_with("ERROR:"), "{t:?}");
    assert!(!t.contains('\u{1b}'));
    assert!(t.contains('\u{fffd}'));
    assert!(t.ends_with("end"));
}

#[test]
fn huge_lines_keep_offsets_and_cap_matching() {
    let mut data = Vec::new();
    data.extend_from_slice(b"first\n");
    data.extend(std::iter::repeat_n(b'x', 5_000_000));
    data.extend_from_slice(b" ERROR: late\nlast");
    let spans = split_lines(&data);
    assert_eq!(spans.len(), 3);
    assert_eq!(spans[1].len(), 5_000_000 + 12);
    assert_eq!(spans[2].start, 6 + 5_000_000 + 13);
    let t = clean_line(spans[1].bytes(&data), 4096);
    assert_eq!(t.len(), 4096);
    // the streaming splitter agrees with bounded memory
    let r = BufReader::with_capacity(1 << 16, &data[..]);
    let got: Vec<(usize, u64, u64, usize)> = StreamLines::new(r, 1024)
        .map(|l| {
            let l = l.unwrap();
            (l.number, l.offset, l.len, l.head.len())
        })
        .collect();
    assert_eq!(got, vec![(1, 0, 5, 5), (2, 6, 5_000_012, 1024), (3, 6 + 5_000_013, 4, 4)]);
}

#[test]
fn scan_finds_spyglass_lines_with_cr_convention() {
    let re = marker_regex(SPYGLASS_HIGHLIGHT).unwrap();
    let log = b"ok\r\nprogress 10%\rprogress 20%\rpanic: boom\nE0510 12:34:56.789] x\nfine\n--- FAIL: TestX\n";
    assert_eq!(scan_markers(log, &re), vec![4, 5, 7]);
}

const GO_LOG: &str = "=== RUN   TestA
--- PASS: TestA (0.00s)
=== RUN   TestB
    b_test.go:12: expected 3, got 4
--- FAIL: TestB (0.01s)
FAIL
FAIL\texample.com/pkg\t0.012s
ok  \texample.com/other\t0.004s
";

#[test]
fn go_test_failure_without_pass_log() {
    let r = extract_log(GO_LOG.as_bytes(), None, "build-log.txt", &ExtractConfig::default());
    assert!(r.lines.contains(&5), "{:?}", r.lines);
    assert!(!r.lines.contains(&1) && !r.lines.contains(&2));
    let first = &r.excerpts[0];
    assert!(first.first_failure);
    assert_eq!(first.source, "build-log.txt");
    assert!(first.hash.starts_with("sha256:") && first.hash.len() == 7 + 64);
    assert!(first.line_start <= first.line_end);
}

#[test]
fn diff_against_passing_log_keeps_new_failure() {
    let pass = "step 1 at 2024-01-01T10:00:00Z\nfetching deps 123 MB\n[ERROR] known noisy warning\nBUILD SUCCESS\n";
    let fail = "step 1 at 2024-02-02T11:11:11Z\nfetching deps 456 MB\n[ERROR] known noisy warning\n[ERROR] /src/A.java:[3,13] cannot find symbol\n  symbol:   method foo()\n[INFO] BUILD FAILURE\n";
    let cfg = ExtractConfig::default();
    let with = extract_log(fail.as_bytes(), Some(pass.as_bytes()), "b", &cfg);
    assert_eq!(with.lines, vec![4, 5], "{:?}", with.excerpts);
    assert_eq!(with.excerpts[0].selection, Selection::NewVsPass);
    assert_eq!(with.first_failure_line, Some(4));
    // ground-truth style evidence text
    assert!(with.excerpts[0].text.contains("cannot find symbol"));
}

#[test]
fn ginkgo_and_klog_markers() {
    let log = "I0510 12:00:00.000000 1 a.go:1] starting\n\
STEP: creating a pod\n\
[FAILED] Timed out after 30.000s.\n\
Expected\n    <bool>: false\nto be true\n\
In [It] at: test/e2e/apps/x.go:12 @ 05/10/26 12:00:30.1\n\
I0510 12:00:31.000000 1 a.go:2] cleanup\n";
    let r = extract_log(log.as_bytes(), None, "b", &ExtractConfig::default());
    assert_eq!(r.first_failure_line, Some(3));
    assert!(r.lines.contains(&3) && r.lines.contains(&5));
    assert!(!r.lines.contains(&1));
}

#[test]
fn binary_junk_log_does_not_panic() {
    let mut data: Vec<u8> = (0..200_000u32).map(|i| (i.wrapping_mul(2654435761u32) >> 24) as u8).collect();
    data.extend_from_slice(b"\nERROR: real failure\n");
    let r = extract_log(&data, Some(&data[..1000]), "b", &ExtractConfig::default());
    assert!(r.total_lines > 0);
    assert!(r.excerpts.iter().any(|e| e.text.contains("real failure")));
}

#[test]
fn junit_failure_text_becomes_evidence() {
    let cfg = ExtractConfig::default();
    let e = extract_junit(
        "[FAILED] Expected success, but got an error",
        "test/e2e/x.go:10\nstack line",
        "junit_01.xml",
        &cfg,
    );
    assert!(!e.is_empty());
    assert_eq!(e[0].selection, Selection::Junit);
    assert_eq!(e[0].line_start, 1);
    let plain = extract_junit("something odd happened", "", "junit.xml", &cfg);
    assert_eq!(plain.len(), 1);
    assert_eq!(plain[0].text, "something odd happened");
    assert!(extract_junit("", "  ", "j", &cfg).is_empty());
}

/// A `go test -v -race` log: testify output before `--- FAIL`, a data race report between
/// separators, package verdicts (written for this test, modelled on go test's format).
const GO_RACE_LOG: &str = "go test -race ./pkg/controller/...
=== RUN   TestSyncPods
I0510 12:00:00.000100   12345 controller.go:120] \"Syncing pod\" pod=\"default/web-0\"
=== RUN   TestSyncPods/creates_missing_pod
    controller_test.go:88:
        \tError Trace:\t/go/src/example.com/pkg/controller/controller_test.go:88
        \tError:      \tNot equal:
        \t            \texpected: 3
        \t            \tactual  : 4
=== RUN   TestSyncPods/deletes_extra_pod
--- FAIL: TestSyncPods (0.02s)
    --- FAIL: TestSyncPods/creates_missing_pod (0.01s)
    --- PASS: TestSyncPods/deletes_extra_pod (0.00s)
=== RUN   TestCache
==================
WARNING: DATA RACE
Write at 0x00c0001a2b40 by goroutine 8:
  example.com/pkg/controller.(*cache).set()
      /go/src/example.com/pkg/controller/cache.go:41 +0x44

Previous read at 0x00c0001a2b40 by goroutine 7:
  example.com/pkg/controller.(*cache).get()
      /go/src/example.com/pkg/controller/cache.go:33 +0x3a
==================
    testing.go:1398: race detected during execution of test
--- FAIL: TestCache (0.00s)
=== RUN   TestQueue
--- PASS: TestQueue (0.00s)
FAIL
FAIL\texample.com/pkg/controller\t0.231s
ok  \texample.com/pkg/controller/util\t0.041s
";

#[test]
fn go_test_messages_before_fail_and_data_race_reports() {
    let r = extract_log(GO_RACE_LOG.as_bytes(), None, "build-log.txt", &ExtractConfig::default());
    let got: std::collections::BTreeSet<usize> = r.lines.iter().copied().collect();
    // the assertion printed before --- FAIL (lines 5-9), the FAIL lines
    for l in [5, 6, 7, 8, 9, 11, 12] {
        assert!(got.contains(&l), "line {l} missing: {got:?}");
    }
    // the race report: head, both accesses and their frames
    for l in [16, 17, 18, 19, 21, 22, 23, 25, 26] {
        assert!(got.contains(&l), "race line {l} missing: {got:?}");
    }
    // passing tests, the klog info line and RUN lines are not failure lines
    for l in [1, 2, 3, 4, 10, 13, 14, 27, 28, 31] {
        assert!(!got.contains(&l), "line {l} selected: {got:?}");
    }
    let race = r.excerpts.iter().find(|e| e.marker == "go-race").expect("race excerpt");
    assert_eq!(race.line_start, 16);
    assert!(race.line_end >= 23, "{race:?}");
}

#[test]
fn lone_klog_errors_are_kept_without_a_passing_log() {
    let log = "I0510 12:00:00.000000       1 server.go:55] Starting v1.31.0
E0510 12:00:01.000000       1 reflector.go:158] failed to list *v1.Node: nodes is forbidden
I0510 12:00:02.000000       1 leaderelection.go:260] acquired lease
E0510 12:00:03.000000       1 event.go:359] Server rejected event: not found
I0510 12:00:04.000000       1 x.go:1] tick
E0510 12:00:05.000000       1 event.go:359] Server rejected event: not found
I0510 12:00:06.000000       1 x.go:1] tick
E0510 12:00:07.000000       1 event.go:359] Server rejected event: not found
I0510 12:00:08.000000       1 x.go:2] work done
I0510 12:00:09.000000       1 x.go:3] shutting down
";
    let cfg = ExtractConfig::default();
    let r = extract_log(log.as_bytes(), None, "b", &cfg);
    assert!(r.lines.contains(&2), "{:?}", r.lines);
    let off = ExtractConfig { lone_errors: 0, ..cfg };
    assert!(!extract_log(log.as_bytes(), None, "b", &off).lines.contains(&2));
}

#[test]
fn other_toolchains_state_failures() {
    let log = "running 2 tests
test tests::adds ... ok
test tests::subtracts ... FAILED

failures:

---- tests::subtracts stdout ----
thread 'tests::subtracts' panicked at src/lib.rs:10:5:
assertion `left == right` failed
  left: 1
 right: 2

test result: FAILED. 1 passed; 1 failed; 0 ignored
";
    let r = extract_log(log.as_bytes(), None, "b", &ExtractConfig::default());
    for l in [3, 7, 8] {
        assert!(r.lines.contains(&l), "line {l}: {:?}", r.lines);
    }
    assert!(!r.lines.contains(&2));
    let py = "tests/test_x.py::test_ok PASSED
tests/test_x.py::test_sum FAILED
=================================== FAILURES ===================================
___________________________________ test_sum ___________________________________

    def test_sum():
>       assert 1 + 1 == 3
E       assert (1 + 1) == 3

tests/test_x.py:5: AssertionError
";
    let r = extract_log(py.as_bytes(), None, "b", &ExtractConfig::default());
    for l in [2, 4, 7] {
        assert!(r.lines.contains(&l), "line {l}: {:?}", r.lines);
    }
    assert!(!r.lines.contains(&1));
}
