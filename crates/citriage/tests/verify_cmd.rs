//! `citriage verify` end to end: a report checked against a real SQLite store of builds
//! (results, and which buckets the store covers), a GitHub-shaped API on 127.0.0.1
//! (pull requests, issues, timelines, commits) and a named checkout, with the JSON
//! listing every claim's verdict and the text grouping findings by severity.

use citriage_store::{BuildRecord, Store};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;

mod common;

use common::{run, stderr};

fn build(job: &str, id: &str, result: &str) -> BuildRecord {
    BuildRecord {
        kettle: None,
        testgrid: None,
        bucket: "kubernetes-ci-logs".into(),
        path: format!("logs/{job}/{id}"),
        job: job.into(),
        build_id: id.into(),
        kind: "periodic".into(),
        pr: None,
        commit_sha: None,
        repo_commit: None,
        repo_version: None,
        repos: None,
        started: Some(1_778_300_000),
        finished: Some(1_778_303_600),
        duration: Some(3600),
        result: Some(result.into()),
        state: None,
        executor: None,
        origin: "gcs".into(),
        problems: Vec::new(),
        complete: true,
        tests: Vec::new(),
        artifacts: Vec::new(),
        excerpts: Vec::new(),
        versions: Vec::new(),
    }
}

struct Api {
    server: Arc<tiny_http::Server>,
    base: String,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Api {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// kubernetes/kubernetes#1 merged; #2 open with lgtm, approved and a hold added before
/// the report's day; commits are unknown (422) except `4c7f84c517c...`.
fn api() -> Api {
    let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("bind"));
    let base = format!("http://127.0.0.1:{}", server.server_addr().to_ip().expect("ip").port());
    let srv = server.clone();
    let thread = std::thread::spawn(move || {
        for rq in srv.incoming_requests() {
            let labels = |names: &[&str]| names.iter().map(|n| json!({"name": n})).collect::<Vec<_>>();
            let (status, body) = match rq.url() {
                "/repos/kubernetes/kubernetes/issues/1" => (
                    200,
                    json!({"number": 1, "state": "closed", "title": "fix",
                    "labels": labels(&["lgtm", "approved"]), "created_at": "2026-05-01T00:00:00Z", "updated_at": "2026-05-09T10:00:00Z",
                    "closed_at": "2026-05-09T10:00:00Z", "pull_request": {"merged_at": "2026-05-09T10:00:00Z"}}),
                ),
                "/repos/kubernetes/kubernetes/issues/2" => (
                    200,
                    json!({"number": 2, "state": "open", "title": "held",
                    "labels": labels(&["approved", "do-not-merge/hold", "lgtm"]), "created_at": "2026-05-01T00:00:00Z",
                    "updated_at": "2026-05-08T00:00:00Z", "draft": false, "pull_request": {"merged_at": null}}),
                ),
                "/repos/kubernetes/kubernetes/pulls/2" => (
                    200,
                    json!({"number": 2, "state": "open", "merged": false, "draft": false,
                    "mergeable": true, "title": "held", "labels": labels(&["approved", "do-not-merge/hold", "lgtm"]),
                    "created_at": "2026-05-01T00:00:00Z", "updated_at": "2026-05-08T00:00:00Z"}),
                ),
                "/repos/kubernetes/kubernetes/issues/2/timeline?per_page=100" => (
                    200,
                    json!([
                        {"event": "labeled", "created_at": "2026-05-02T00:00:00Z", "label": {"name": "lgtm"}},
                        {"event": "labeled", "created_at": "2026-05-03T00:00:00Z", "label": {"name": "approved"}},
                        {"event": "labeled", "created_at": "2026-05-08T00:00:00Z", "label": {"name": "do-not-merge/hold"}}
                    ]),
                ),
                u if u.starts_with("/repos/kubernetes/kubernetes/commits/4c7f84c517c") => (
                    200,
                    json!({"sha": "4c7f84c517c0aa11bb22cc33dd44ee55ff667788",
                    "commit": {"author": {"name": "A", "date": "2026-05-09T00:00:00Z"}, "message": "Fix the chaos test"}}),
                ),
                u if u.starts_with("/repos/kubernetes/kubernetes/commits/") => {
                    (422, json!({"message": "No commit found for SHA"}))
                }
                _ => (404, json!({"message": "Not Found"})),
            };
            let _ = rq.respond(tiny_http::Response::from_string(body.to_string()).with_status_code(status));
        }
    });
    Api { server, base, thread: Some(thread) }
}

const REPORT: &str = "# Kubernetes CI Flakes — Triage Report

**Date**: 2026-05-10

## TL;DR

1. k/k#1 MERGED on 2026-05-09 and is in Tier 0.
2. k/k#2 is lgtm + approved, waiting on tide.
3. The newest passing run is https://prow.k8s.io/view/gs/kubernetes-ci-logs/logs/ci-a/2053000000000000002.

## Notes

- `StartTestServer` at pkg/server.go:3 polls for 10s; the fix is commit 4c7f84c517c in k/k, the breakage came from k/k commit 0badc0de991.
- A job that does not exist: https://prow.k8s.io/view/gs/kubernetes-ci-logs/logs/ci-made-up/2053000000000000009.
- A presubmit the store never fetched: https://prow.k8s.io/view/gs/kubernetes-ci-logs/pr-logs/pull/5/pull-x/2053000000000000010.

## 3. Action plan

### Tier 0 — Done
| # | Item | Status |
|---|---|---|
| 0.1 | k/k#1 | ✅ MERGED 2026-05-09 |
";

fn setup(dir: &Path) -> std::path::PathBuf {
    let db = dir.join("citriage.db");
    let mut store = Store::open(&db).unwrap();
    store.put_build(&build("ci-a", "2053000000000000001", "SUCCESS")).unwrap();
    store.put_build(&build("ci-a", "2053000000000000002", "FAILURE")).unwrap();
    drop(store);
    let co = dir.join("kubernetes");
    std::fs::create_dir_all(co.join("pkg")).unwrap();
    std::fs::write(co.join("pkg/server.go"), "package pkg\n\nfunc StartTestServer() {\n\tpoll(10 * time.Second)\n}\n")
        .unwrap();
    std::fs::write(dir.join("report.md"), REPORT).unwrap();
    db
}

fn line_of(needle: &str) -> u64 {
    REPORT.lines().position(|l| l.contains(needle)).map(|i| i as u64 + 1).unwrap()
}

#[test]
fn verify_checks_builds_refs_commits_and_code_and_lists_claims() {
    let dir = tempfile::tempdir().unwrap();
    let db = setup(dir.path());
    let gh = api();
    let report = dir.path().join("report.md");
    let checkout = format!("kubernetes={}=kubernetes/kubernetes", dir.path().join("kubernetes").display());
    let o =
        run(&db, &["--format", "json", "verify", report.to_str().unwrap(), "--api", &gh.base, "--checkout", &checkout]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut found: Vec<(u64, String)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["line"].as_u64().unwrap(), f["rule_id"].as_str().unwrap().to_string()))
        .collect();
    found.sort();
    // Structure rules fire on this small report too; the claims are what matter here.
    let claims_found: Vec<&(u64, String)> = found
        .iter()
        .filter(|(_, r)| {
            ["ref-state", "ref-labels", "commit", "build-url", "build-result", "file-content"].contains(&r.as_str())
        })
        .collect();
    let want = vec![
        (line_of("waiting on tide"), "ref-labels".to_string()),
        (line_of("newest passing run"), "build-result".to_string()),
        (line_of("0badc0de991"), "commit".to_string()),
        (line_of("ci-made-up"), "build-url".to_string()),
    ];
    let mut want_sorted = want.clone();
    want_sorted.sort();
    assert_eq!(claims_found.into_iter().cloned().collect::<Vec<_>>(), want_sorted, "{v:#}");
    // Every claim is listed with its verdict and evidence.
    let claims = v["claims"].as_array().unwrap();
    let verdict = |kind: &str, needle: &str| -> String {
        claims
            .iter()
            .find(|c| c["kind"] == kind && c["subject"].as_str().unwrap().contains(needle))
            .unwrap_or_else(|| panic!("no {kind} claim about {needle}: {claims:#?}"))["verdict"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(verdict("ref-state", "k/k#1"), "verified");
    assert_eq!(verdict("build-result", "2053000000000000002"), "false");
    assert_eq!(verdict("commit", "4c7f84c517c"), "verified");
    assert_eq!(verdict("file-content", "pkg/server.go:3"), "verified");
    assert_eq!(verdict("build-url", "pull-x"), "unchecked");
    let held = claims.iter().find(|c| c["kind"] == "ref-labels" && c["verdict"] == "false").unwrap();
    assert!(!held["evidence"].as_array().unwrap().is_empty(), "{held}");
    // The build evidence comes from the store.
    let b = claims.iter().find(|c| c["kind"] == "build-result").unwrap();
    assert!(b["evidence"][0]["locator"].as_str().unwrap().ends_with("/finished.json"), "{b}");
    // What could not be checked is summarised by reason.
    let summary = v["not_checked_summary"].as_array().unwrap();
    assert!(
        summary.iter().any(|g| g["kind"] == "build-url" && g["why"].as_str().unwrap().contains("no build of this job")),
        "{summary:?}"
    );
    // The text output groups findings by severity, errors first.
    let t = run(&db, &["verify", report.to_str().unwrap(), "--api", &gh.base, "--checkout", &checkout]);
    let text = String::from_utf8_lossy(&t.stdout);
    let errors = text.find("## Errors").expect("an errors group");
    let warnings = text.find("## Warnings").expect("a warnings group");
    assert!(errors < warnings, "{text}");
    assert!(text.contains("| Kind | Why | Count | Examples |"), "{text}");
}

#[test]
fn as_of_must_be_a_day() {
    let dir = tempfile::tempdir().unwrap();
    let db = setup(dir.path());
    let o = run(&db, &["verify", dir.path().join("report.md").to_str().unwrap(), "--offline", "--as-of", "May 10"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--as-of \"May 10\": expected a day as YYYY-MM-DD"), "{}", stderr(&o));
}
