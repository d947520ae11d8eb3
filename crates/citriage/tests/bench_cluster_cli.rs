//! `citriage bench cluster` end to end on a small generated input: every generated
//! failure reaches both the store and the reference's input files, each profile runs
//! twice as a measured child, and the benchmark's own peak is reported (a child's peak
//! counts the copy of the benchmark it starts as, so the benchmark keeps itself small).

use serde_json::Value;

mod common;

use common::{bin, stderr};

#[test]
fn the_input_is_written_whole_and_each_run_measured() {
    let dir = std::env::temp_dir().join(format!("citriage-bench-cluster-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = bin()
        .args(["bench", "cluster", "--failures", "3000", "--profile", "default", "--format", "json", "--quiet"])
        .arg("--dir")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let builds = v["builds"].as_u64().unwrap();
    assert!(builds > 100, "{v}");
    // The reference's input: one line per failure, one row per build.
    let tests = std::fs::read_to_string(dir.join("tests.json")).unwrap();
    assert_eq!(tests.lines().count(), 3000);
    let rows: Vec<Value> = serde_json::from_slice(&std::fs::read(dir.join("builds.json")).unwrap()).unwrap();
    assert_eq!(rows.len() as u64, builds);
    let failed: u64 = rows.iter().map(|r| r["tests_failed"].as_u64().unwrap()).sum();
    assert_eq!(failed, 3000);
    // The store: every build, every failure.
    let info =
        bin().arg("--db").arg(dir.join("store.db")).args(["store", "info", "--format", "json"]).output().unwrap();
    assert!(info.status.success(), "{}", stderr(&info));
    let info: Value = serde_json::from_slice(&info.stdout).unwrap();
    let rows = |t: &str| info["tables"].as_array().unwrap().iter().find(|x| x["table"] == t).unwrap()["rows"].as_u64();
    assert_eq!(rows("builds"), Some(builds));
    assert_eq!(rows("test_results"), Some(3000));
    // Each run measured; `cluster` read the failures of the 14 days to the newest build.
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{v}");
    for r in runs {
        assert!(r["cost"]["peak_rss_mib"].as_f64().unwrap() > 0.0, "{r}");
    }
    let printed = std::fs::read_to_string(dir.join("cluster-default-first.out")).unwrap();
    assert!(printed.contains(" failures from ") && printed.contains("every failure in exactly one cluster: true"));
    assert!(v["benchmark_peak_rss_mib"].as_f64().is_some_and(|m| m > 0.0), "{v}");
    let _ = std::fs::remove_dir_all(&dir);
}
