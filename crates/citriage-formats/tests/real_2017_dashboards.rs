//! Every version of the Kubernetes metrics dashboards that test-infra committed in
//! 2017 (`shared/data/real/k8s-metrics-2017/`), read by the snapshot reader: numbers
//! written as JSON strings are read with one warning per file naming the fields, the
//! old `flakiest` key is the test list, and the two dashboards citriage does not
//! import are refused by name. Each file's figures are checked against a plain JSON
//! walk of the same file. Skips with a reason when the shared data is absent.

use citriage_formats::{parse_snapshot, SnapshotError};
use citriage_model::Dataset;
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

fn files(dir: &std::path::Path, prefix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(prefix)))
        .collect();
    v.sort();
    v
}

/// A number as the file writes it, whether a JSON number or a string spelling one.
fn plain_number(v: &serde_json::Value) -> f64 {
    match v {
        serde_json::Value::String(s) => s.parse().unwrap(),
        other => other.as_f64().unwrap(),
    }
}

#[test]
fn failures_dashboards_of_2017() {
    let Some(dir) = shared("real/k8s-metrics-2017") else { return };
    let all = files(&dir, "failures-latest.");
    assert_eq!(all.len(), 8);
    let mut read = 0;
    for f in &all {
        let name = f.file_name().unwrap().to_str().unwrap();
        let bytes = std::fs::read(f).unwrap();
        let plain: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&bytes).unwrap();
        match parse_snapshot(&bytes, name, None) {
            Ok(p) => {
                read += 1;
                assert_eq!(p.dataset, Dataset::Failures);
                assert_eq!(p.jobs.len(), plain.len(), "{name}");
                for j in &p.jobs {
                    let want = plain_number(&plain[&j.job]["failing_days"]);
                    assert_eq!(f64::from(j.stats.failing_days().unwrap()), want, "{name} {}", j.job);
                }
                let strings = plain.values().filter(|v| v["failing_days"].is_string()).count();
                let expected =
                    format!("{name}: numbers written as JSON strings in \"failing_days\" ({strings} value(s))");
                assert_eq!(p.warnings.len(), 1, "{name}: {:?}", p.warnings);
                assert!(p.warnings[0].starts_with(&expected), "{name}: {:?}", p.warnings);
                println!("{name}: {} jobs; {}", p.jobs.len(), p.warnings[0]);
            }
            Err(e) => {
                // The oldest version wrote the day each job last passed, not a count of days.
                assert!(plain.values().all(|v| v.get("failing_since").is_some()), "{name}: {e}");
                assert!(matches!(e, SnapshotError::Field { .. }), "{name}: {e}");
                assert!(e.to_string().contains("field \"failing_since\""), "{e}");
                println!("{name}: refused: {e}");
            }
        }
    }
    assert_eq!(read, 7, "every version but the failing_since one is read");
}

#[test]
fn flakes_dashboards_of_2017() {
    let Some(dir) = shared("real/k8s-metrics-2017") else { return };
    let all = files(&dir, "flakes-latest.");
    assert_eq!(all.len(), 11);
    let mut listed_tests = 0;
    for f in &all {
        let name = f.file_name().unwrap().to_str().unwrap();
        let bytes = std::fs::read(f).unwrap();
        let plain: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&bytes).unwrap();
        let p = parse_snapshot(&bytes, name, None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.dataset, Dataset::Flakes);
        assert_eq!(p.jobs.len(), plain.len(), "{name}");
        for j in &p.jobs {
            let want = &plain[&j.job];
            let s = j.stats.flake().unwrap();
            assert_eq!(s.consistency, plain_number(&want["consistency"]), "{name} {}", j.job);
            assert_eq!(s.flakes as f64, plain_number(&want["flakes"]), "{name} {}", j.job);
            match want["flakiest"].as_object() {
                None => assert_eq!(s.test_flakes, None, "{name} {}", j.job),
                Some(tests) => {
                    let got = s.test_flakes.as_ref().expect("the flakiest list is read as the test list");
                    assert_eq!(got.len(), tests.len());
                    for (t, n) in tests {
                        assert_eq!(got[t] as f64, plain_number(n), "{name} {} {t}", j.job);
                    }
                    listed_tests += got.len();
                }
            }
        }
        let has_strings = plain.values().any(|v| v["flakes"].is_string());
        let string_warnings = p.warnings.iter().filter(|w| w.contains("numbers written as JSON strings")).count();
        assert_eq!(string_warnings, usize::from(has_strings), "{name}: {:?}", p.warnings);
        if has_strings {
            let w = p.warnings.iter().find(|w| w.contains("JSON strings")).unwrap();
            for field in ["\"consistency\"", "\"flakes\"", "\"flakiest\""] {
                assert!(w.contains(field), "{w}");
            }
        }
        assert!(p.warnings.iter().any(|w| w.contains("older key \"flakiest\"")), "{name}: {:?}", p.warnings);
        println!("{name}: {} jobs; warnings: {:?}", p.jobs.len(), p.warnings);
    }
    assert!(listed_tests > 100, "{listed_tests} tests listed in all");
}

#[test]
fn dashboards_citriage_does_not_import_are_refused_by_name() {
    let Some(dir) = shared("real/k8s-metrics-2017") else { return };
    for (prefix, dashboard, n) in
        [("job-flakes-latest.", "job-flakes", 10), ("weekly-consistency.", "weekly-consistency", 9)]
    {
        let all = files(&dir, prefix);
        assert_eq!(all.len(), n);
        for f in all {
            let name = f.file_name().unwrap().to_str().unwrap();
            let bytes = std::fs::read(&f).unwrap();
            for hint in [None, Some(Dataset::Flakes), Some(Dataset::Failures)] {
                let e = parse_snapshot(&bytes, name, hint).unwrap_err();
                assert!(matches!(e, SnapshotError::Unsupported { dashboard: d, .. } if d == dashboard), "{name}: {e}");
                assert!(e.to_string().starts_with(&format!("{name}: this is the {dashboard} dashboard")), "{e}");
            }
        }
    }
}
