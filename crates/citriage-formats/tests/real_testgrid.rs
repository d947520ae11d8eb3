//! A real TestGrid table and dashboard summary (`shared/data/real/testgrid-2020/`, the
//! OpenShift 4.4 informing dashboard of March 2020) read by the TestGrid reader: every
//! cell accounted for, the counts per status checked against a count made by walking
//! the same JSON plainly (no run-length decoding of the reader's). Skips with a reason
//! when the shared data is absent.

use citriage_formats::testgrid::{parse_summary, parse_table, read_table, TableLimits, TestStatus};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A file or folder of the shared data beside the checkout (`../shared/data`).
fn shared(rel: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data").join(rel);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("skipped: {} is not available", p.display());
        None
    }
}

const TAB: &str = "release-openshift-ocp-installer-e2e-gcp-rt-4.4";

#[test]
fn the_real_table_is_read_with_every_cell_accounted_for() {
    let Some(path) = shared("real/testgrid-2020/e2e-gcp-rt-4.4.table.json") else { return };
    let bytes = std::fs::read(&path).unwrap();
    let t = parse_table(&bytes, TAB, &TableLimits::default()).unwrap_or_else(|e| panic!("{e}"));

    // The independent count: the JSON walked as plain values, runs summed per value.
    let plain: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let runs = plain["changelists"].as_array().unwrap().len();
    let tests = plain["tests"].as_array().unwrap();
    let mut expected: BTreeMap<u64, u64> = BTreeMap::new();
    for row in tests {
        for run in row["statuses"].as_array().unwrap() {
            *expected.entry(run["value"].as_u64().unwrap()).or_default() += run["count"].as_u64().unwrap();
        }
    }

    assert_eq!((t.columns.len(), t.rows.len()), (runs, tests.len()));
    assert_eq!((runs, tests.len()), (82, 965));
    let counts = t.status_counts();
    let total: u64 = counts.values().sum();
    assert_eq!(total, (runs * tests.len()) as u64, "cells = runs × rows");
    println!("{TAB}: {runs} runs × {} rows = {total} cells", tests.len());
    for (status, n) in &counts {
        println!("  {:>2} {:<17} {n:>6}  counted as {:?}", status.number(), status.name(), status.reading());
        assert_eq!(*n, expected.get(&u64::from(status.number())).copied().unwrap_or(0), "{status}");
    }
    assert_eq!(expected.values().sum::<u64>(), total);
    assert_eq!(
        (counts[&TestStatus::Pass], counts[&TestStatus::Fail], counts[&TestStatus::NoResult]),
        (65_829, 797, 12_504)
    );

    // Columns: build ids and start times as the answer gives them, newest first.
    assert_eq!(t.columns[0].build, "84");
    assert_eq!(t.columns[0].started_ms, Some(1_585_369_505_000));
    assert_eq!(t.columns.last().unwrap().build, "1");
    assert_eq!(t.custom_headers, ["Commit", "Infra-Commit"]);
    // The tab's own metadata.
    assert_eq!(t.meta.query.as_deref(), Some("origin-ci-test/logs/release-openshift-ocp-installer-e2e-gcp-rt-4.4"));
    assert_eq!(t.meta.test_group.as_deref(), Some("releaseopenshiftocpinstallere2egcprt44"));
    assert_eq!(t.meta.stale_test_threshold, Some(10));
    assert_eq!(t.meta.num_stale_tests, Some(646));
    assert!(t.meta.templates["file-bug-template"].url.starts_with("https://bugzilla.redhat.com/"));
    assert_eq!(
        t.meta.templates["open-test-template"].url,
        "https://prow.svc.ci.openshift.org/view/gcs/<gcs_prefix>/<changelist>"
    );
    assert_eq!(t.meta.code_search_path.as_deref(), Some("https://github.com/openshift/origin/search"));
    let alerts: Vec<_> = t.rows.iter().filter_map(|r| r.alert.as_ref().map(|a| (&r.name, a))).collect();
    assert_eq!(alerts.len(), 1);
    assert_eq!(alerts[0].1.fail_count, Some(3));
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);

    // Read as a stream, the same table.
    let streamed = read_table(std::io::BufReader::new(&bytes[..]), TAB, &TableLimits::default()).unwrap();
    assert_eq!(streamed, t);
    // Within a budget smaller than the table, refused by name before it is held.
    let e = parse_table(&bytes, TAB, &TableLimits { max_bytes: 100_000 }).unwrap_err();
    assert!(e.to_string().starts_with(&format!("TestGrid tab {TAB:?}: ")), "{e}");
    assert!(e.problem.contains("would take more than 100000 bytes"), "{e}");
}

#[test]
fn the_real_summary_is_read() {
    let Some(path) = shared("real/testgrid-2020/summary.json") else { return };
    let bytes = std::fs::read(&path).unwrap();
    let s = parse_summary(&bytes, "redhat-openshift-ocp-release-4.4-informing").unwrap_or_else(|e| panic!("{e}"));
    let plain: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(s.tabs.len(), plain.len());
    assert_eq!(s.tabs.len(), 49);
    let mut by_status: BTreeMap<&str, usize> = BTreeMap::new();
    for t in &s.tabs {
        *by_status.entry(t.overall_status.as_deref().unwrap_or("-")).or_default() += 1;
        assert_eq!(t.overall_status.as_deref(), plain[&t.tab]["overall_status"].as_str());
        assert_eq!(t.failing_tests.len(), plain[&t.tab]["tests"].as_array().map_or(0, Vec::len));
    }
    println!("{by_status:?}");
    assert_eq!(by_status, BTreeMap::from([("FAILING", 27), ("FLAKY", 17), ("STALE", 5)]));
    assert!(s.tabs.iter().any(|t| t.tab == TAB));
}
