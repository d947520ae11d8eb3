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

/// A GitHub-shaped server whose first answer for each issue asks to wait: `#1` with a
/// 429 and `Retry-After: 1`, `#2` with a 403 whose rate limit resets a second later.
/// Later answers are the issue, merged. Records the `Authorization` headers it got.
fn waiting_github() -> (String, std::sync::Arc<std::sync::Mutex<Vec<Option<String>>>>) {
    use std::sync::{Arc, Mutex};
    let server = tiny_http::Server::http("127.0.0.1:0").expect("listen");
    let base = format!("http://127.0.0.1:{}", server.server_addr().to_ip().expect("ip").port());
    let auth = Arc::new(Mutex::new(Vec::new()));
    let seen = auth.clone();
    std::thread::spawn(move || {
        let mut asked: std::collections::BTreeMap<String, u32> = Default::default();
        for req in server.incoming_requests() {
            let path = req.url().to_string();
            seen.lock().expect("lock").push(
                req.headers().iter().find(|h| h.field.equiv("Authorization")).map(|h| h.value.as_str().to_string()),
            );
            let n = asked.entry(path.clone()).or_default();
            *n += 1;
            let header = |h: String| h.parse::<tiny_http::Header>().expect("header");
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs();
            let resp = match (path.as_str(), *n) {
                ("/repos/o/r/issues/1", 1) => tiny_http::Response::from_string("slow down")
                    .with_status_code(429)
                    .with_header(header("Retry-After: 1".into())),
                ("/repos/o/r/issues/2", 1) => {
                    tiny_http::Response::from_string(r#"{"message": "API rate limit exceeded"}"#)
                        .with_status_code(403)
                        .with_header(header("X-RateLimit-Remaining: 0".into()))
                        .with_header(header(format!("X-RateLimit-Reset: {}", now + 1)))
                }
                (p, _) => {
                    let n: u64 = p.rsplit('/').next().and_then(|n| n.parse().ok()).unwrap_or(0);
                    let answer = serde_json::json!({"number": n, "title": format!("fix {n}"), "state": "closed",
                        "labels": [], "created_at": "2026-11-01T10:00:00Z", "updated_at": "2026-11-02T10:00:00Z",
                        "html_url": format!("https://github.com/o/r/pull/{n}"),
                        "pull_request": {"merged_at": MERGED_AT, "html_url": format!("https://github.com/o/r/pull/{n}")}});
                    tiny_http::Response::from_string(answer.to_string())
                        .with_header(header("Content-Type: application/json".into()))
                }
            };
            let _ = req.respond(resp);
        }
    });
    (base, auth)
}

/// Without `--timeout`, GitHub's waits are said on stderr before they are slept: what
/// is waited for, how long, the URL; never the token. `--quiet` says nothing.
#[test]
fn waits_are_said_on_stderr_without_the_token() {
    const SECRET: &str = "ghp_waitsecret0123456789";
    for quiet in [false, true] {
        let dir = tempfile::tempdir().expect("tmp");
        let (base, auth) = waiting_github();
        let mut cmd = common::bin();
        cmd.env("GITHUB_TOKEN", SECRET)
            .env_remove("GH_TOKEN")
            .env("NO_COLOR", "1")
            .arg("--db")
            .arg(dir.path().join("gh.db"));
        if quiet {
            cmd.arg("--quiet");
        }
        let o = cmd
            .args(["--format", "json", "gh", "sweep", "--api", &base, "--no-timelines", "o/r#1", "o/r#2"])
            .output()
            .expect("runs");
        let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert!(o.status.success(), "{err}");
        let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        assert_eq!(merged_refs(&v).len(), 2, "both lookups got their answer after the wait: {out}");
        // The token was sent, so it could have leaked; it did not.
        assert!(auth.lock().expect("lock").iter().any(|a| a.as_deref().is_some_and(|a| a.contains(SECRET))));
        assert!(!err.contains(SECRET) && !out.contains(SECRET), "the token leaked:\n{err}\n{out}");
        let retry = format!("waiting 1 s for GitHub's Retry-After (HTTP 429): {base}/repos/o/r/issues/1");
        let reset = "for GitHub's rate limit to reset (HTTP 403): ".to_string() + &format!("{base}/repos/o/r/issues/2");
        if quiet {
            assert!(!err.contains("waiting"), "--quiet still says the waits:\n{err}");
        } else {
            assert!(err.lines().any(|l| l.contains(&retry)), "no line for the Retry-After wait ({retry}):\n{err}");
            let line =
                err.lines().find(|l| l.contains(&reset)).unwrap_or_else(|| panic!("no line for the reset:\n{err}"));
            assert!(line.starts_with("waiting ") && line.contains(" s for "), "{line}");
        }
    }
}
