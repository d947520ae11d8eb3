//! The parsers against real samples from kubernetes/test-infra and prow (kettle's
//! JUnit test data, started/finished variants with the kettle rows they produce).
//! Each test skips with a reason when the shared samples are not beside the checkout.

use citriage_formats::junit::{parse_junit, Status};
use citriage_formats::prow::{parse_finished, parse_started};
use std::path::PathBuf;

fn shared(rel: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data").join(rel);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("skipped: {} is not available", p.display());
        None
    }
}

#[test]
fn kettle_junit_samples() {
    let Some(dir) = shared("k8s/test-infra/kettle/testdata") else { return };
    let read = |f: &str| std::fs::read(dir.join(f)).unwrap();
    let f = parse_junit(&read("standard.xml"), "standard.xml");
    assert_eq!(f.problem, None);
    assert_eq!(f.cases.len(), 8);
    let failed: Vec<_> = f.cases.iter().filter(|c| c.status == Status::Failed).collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].name, "Node Tests");
    assert_eq!(failed[0].failure_text.as_deref(), Some("error during go run"));
    assert_eq!(failed[0].kettle_name.as_deref(), Some("Node Tests"), "root <testsuite>: the bare name");

    let m = parse_junit(&read("failure_message.xml"), "failure_message.xml");
    assert_eq!(m.cases[0].failure_text.as_deref(), Some("simple_test.go:186: Running tests in file plumbing"));
    let t = parse_junit(&read("failure_text.xml"), "failure_text.xml");
    assert_eq!(t.cases[0].failure_text, m.cases[0].failure_text, "message-only and body-only give the same text");
    assert_eq!(
        t.cases[0].kettle_name.as_deref(),
        Some("<unspecified> TestSimpleFile"),
        "a <testsuite> without a name inside <testsuites> is <unspecified> (make_json_test.py)"
    );

    let n = parse_junit(&read("junit_no_suite_name.xml"), "junit_no_suite_name.xml");
    assert_eq!(n.cases.len(), 3);
    let k: Vec<&str> = n.cases.iter().filter_map(|c| c.kettle_name.as_deref()).collect();
    assert_eq!(
        k,
        [
            "<unspecified> TestSimpleFile",
            "<unspecified> TestSimpleFile/plumbing/min/min_program",
            "<unspecified> TestSimpleFile/plumbing/eval_results/error_result"
        ]
    );

    let bad = parse_junit(&read("malformed.xml"), "malformed.xml");
    assert!(bad.problem.as_deref().is_some_and(|p| p.contains("malformed.xml")), "{:?}", bad.problem);
    assert!(bad.cases.iter().all(|c| c.kettle_name.is_none()), "kettle reads nothing of a malformed file");

    let unnamed = parse_junit(&read("malformed_no_testcase_name.xml"), "malformed_no_testcase_name.xml");
    assert_eq!(unnamed.unnamed, 2, "test cases without a name are counted and kept as <unspecified>");
    assert_eq!(unnamed.cases.len(), 8);
    let kettle: Vec<&str> = unnamed.cases.iter().filter_map(|c| c.kettle_name.as_deref()).collect();
    assert_eq!(
        kettle,
        [
            "TearDown Previous",
            "Up",
            "test setup",
            "Node Tests",
            "<unspecified>",
            "<unspecified>",
            "Deferred TearDown",
            "Timeout"
        ],
        "kettle names unnamed cases <unspecified> and reads on (make_json_test.py)"
    );
}

#[test]
fn go_stacktrace_junit() {
    let Some(p) = shared("k8s/kubernetes/integration_junit_go_stacktrace.xml") else { return };
    let f = parse_junit(&std::fs::read(p).unwrap(), "x.xml");
    assert_eq!(f.problem, None);
    let failed: Vec<_> = f.cases.iter().filter(|c| c.status == Status::Failed).collect();
    assert_eq!(failed.len(), 2);
    assert!(failed.iter().all(|c| c.failure_text.as_deref().is_some_and(|t| t.contains(".go:"))));
}

#[test]
fn started_finished_variants_match_kettle_rows() {
    let Some(p) = shared("k8s/prow/started_finished_examples.json") else { return };
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
    let mut checked = 0;
    for case in v["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let started = parse_started(case["started"].to_string().as_bytes(), name).unwrap();
        let finished = parse_finished(case["finished"].to_string().as_bytes(), name).unwrap();
        assert!(started.timestamp.is_some(), "{name}");
        assert!(finished.result.is_some(), "{name}: a result is always derived");
        for (k, row) in case.as_object().unwrap() {
            if !k.starts_with("kettle_row") {
                continue;
            }
            assert_eq!(started.timestamp, row["started"].as_i64(), "{name}");
            assert_eq!(finished.timestamp, row["finished"].as_i64(), "{name}");
            assert_eq!(finished.result.as_deref(), row["result"].as_str(), "{name}");
            assert_eq!(started.repo_commit.as_deref(), row["repo_commit"].as_str(), "{name}");
            checked += 1;
        }
    }
    assert!(checked >= 2);
}

#[test]
fn lines_messages_system_out_and_a_broken_case_are_kept_for_evidence() {
    use citriage_formats::junit::{read_junit_with, ReadOptions};
    let x = br#"<?xml version="1.0"?>
<testsuites>
  <testsuite name="openshift-tests">
    <testcase name="[sig-a] ok"/>
    <testcase name="[sig-b] broken &amp; bad"
              lifecycle="blocking">
      <failure message="boom: x &lt; y">stack &#x41;</failure>
    </testcase>
    <testcase name="[sig-c] new" lifecycle="Informing"><failure>meh</failure></testcase>
    <testcase name="agg"><system-out>passes:
- jobrunid: "1"</system-out></testcase>
  </testsuite>
</testsuites>"#;
    let plain = parse_junit(x, "j.xml");
    let f = read_junit_with(&x[..], "j.xml", ReadOptions { system_out: true });
    assert_eq!(f.problem, None);
    let lines: Vec<u32> = f.cases.iter().map(|c| c.line).collect();
    assert_eq!(lines, [4, 5, 9, 10]);
    let b = &f.cases[1];
    assert_eq!(b.name, "[sig-b] broken & bad");
    assert_eq!(b.message.as_deref(), Some("boom: x < y"));
    assert_eq!(b.failure_text.as_deref(), Some("boom: x < y\nstack A"));
    assert!(f.cases[2].informing);
    assert!(f.cases[3].system_out.as_deref().unwrap().contains("jobrunid"));
    // system-out is only kept when asked for; everything else is the same read
    assert!(plain.cases.iter().all(|c| c.system_out.is_none()));
    assert_eq!(plain.cases.iter().map(|c| c.line).collect::<Vec<_>>(), lines);

    // a file that ends inside a failing case keeps that case, and says where it broke
    let t = parse_junit(
        b"<testsuite name=\"s\">\n<testcase name=\"a\"/>\n<testcase name=\"b\"><failure message=\"m\">body",
        "t.xml",
    );
    assert!(t.problem.as_deref().unwrap().contains("t.xml"));
    assert_eq!(t.cases.len(), 2);
    assert_eq!(t.cases[1].status, Status::Failed);
    assert_eq!(t.cases[1].line, 3);
    assert!(t.cases.iter().all(|c| c.kettle_name.is_none()), "kettle reads a broken file not at all");
}
