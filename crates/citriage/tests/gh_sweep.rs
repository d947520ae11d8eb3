//! `gh sweep` against the GitHub-shaped server on 127.0.0.1: each distinct reference
//! is asked once, however often the arguments and the report name it; an offline
//! sweep answers from the answers cached under the `--api` of the online run without
//! being given it again.

mod common;
#[path = "common/github.rs"]
mod github;

use github::{FakeGithub, MERGED_AT};
use serde_json::Value;

fn sweep(db: &std::path::Path, args: &[&str]) -> Value {
    let o = common::bin()
        .env_remove("GITHUB_TOKEN")
        .env_remove("GH_TOKEN")
        .arg("--db")
        .arg(db)
        .args(["--quiet", "--format", "json", "gh", "sweep"])
        .args(args)
        .output()
        .expect("runs");
    assert!(o.status.success(), "gh sweep {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

fn merged_refs(v: &Value) -> Vec<String> {
    let rows = v["rows"].as_array().expect("rows");
    rows.iter()
        .filter(|r| r["mark"] == "merged")
        .map(|r| r["reference_text"].as_str().expect("text").to_string())
        .collect()
}

#[test]
fn each_reference_is_asked_once_and_offline_finds_the_cached_answers() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("gh.db");
    let report = dir.path().join("report.md");
    std::fs::write(
        &report,
        "Fixed by kubernetes/test-infra#101 (see https://github.com/kubernetes/test-infra/pull/101),\nand kubernetes/kubernetes#202.\n",
    )
    .expect("report");
    let gh = FakeGithub::start();
    let online = sweep(
        &db,
        &[
            "kubernetes/test-infra#101",
            "kubernetes/test-infra#101",
            "kubernetes/kubernetes#202",
            "--report",
            report.to_str().expect("utf-8"),
            "--api",
            &gh.base,
        ],
    );
    let got: Vec<String> = gh.got().iter().map(|g| format!("{} {}", g.method, g.path)).collect();
    // Two distinct merged PRs: one request each (the issues endpoint tells merged).
    assert_eq!(
        got,
        vec![
            "GET /repos/kubernetes/kubernetes/issues/202".to_string(),
            "GET /repos/kubernetes/test-infra/issues/101".into()
        ],
        "requests sent"
    );
    let merged = merged_refs(&online);
    assert_eq!(merged.len(), 2, "{online}");
    assert!(online.to_string().contains(MERGED_AT), "{online}");

    // Offline, without `--api`: the same answers, from the cache, nothing sent.
    let offline = sweep(&db, &["kubernetes/test-infra#101", "kubernetes/kubernetes#202", "--offline"]);
    assert_eq!(merged_refs(&offline), merged, "{offline}");
    assert_eq!(gh.got().len(), 2, "an offline sweep sent requests: {:?}", gh.got());
    // A reference never fetched stays unknown offline.
    let miss = sweep(&db, &["kubernetes/test-infra#101", "kubernetes/kubernetes#999", "--offline"]);
    assert_eq!(merged_refs(&miss).len(), 1, "{miss}");
    assert!(miss.to_string().contains("not-checked"), "{miss}");
}
