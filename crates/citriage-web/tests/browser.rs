//! Headless Chromium over the real server: each page's DOM as the browser built it
//! has the expected elements, hostile CI text stays text, the console reports no
//! errors (a blocked stylesheet or a script would show there), and a screenshot is
//! taken. Skipped, with the reason printed, when Chromium is not installed.

mod common;

use common::{start, GOOD_JOB};
use std::path::Path;
use std::process::Command;

const CHROMIUM: &str = "/usr/bin/chromium";

fn chromium(profile: &Path, args: &[&str]) -> (String, String) {
    let out = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .expect("run chromium");
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Console messages and CSP refusals Chromium logged to stderr.
fn console_problems(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| {
            l.contains("CONSOLE")
                || l.contains("Content Security Policy")
                || l.contains("Uncaught")
                || l.contains("Refused to")
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn pages_in_headless_chromium() {
    if !Path::new(CHROMIUM).exists() {
        eprintln!("skipped: {CHROMIUM} is not installed");
        return;
    }
    let profile = tempfile::tempdir().expect("profile dir");
    // The console check must be able to fail: a page that logs an error is caught.
    let (_, stderr) = chromium(
        profile.path(),
        &["--dump-dom", "data:text/html,<p>x</p><script>console.error('console-probe')</script>"],
    );
    assert!(console_problems(&stderr).iter().any(|l| l.contains("console-probe")), "console not captured:\n{stderr}");
    let srv = start();
    let pages: &[(&str, &[&str])] = &[
        ("/", &["<header>", "id=\"snapshot-failures\"", "class=\"sev sev-critical\"", "Newest patterns"]),
        ("/jobs", &["<table class=\"jobs\">", "&lt;script&gt;alert(1)&lt;/script&gt;"]),
        (&format!("/jobs/{GOOD_JOB}"), &["<div class=\"strip\">", "<svg class=\"chart\"", "<table class=\"builds\">"]),
        (
            "/jobs/%3Cscript%3Ealert(1)%3C%2Fscript%3E",
            &["class=\"cell fail\"", "<h1>&lt;script&gt;alert(1)&lt;/script&gt;</h1>"],
        ),
        ("/clusters?sort=first_seen", &["<form class=\"filters\"", "&lt;img src=x onerror=alert(2)&gt;"]),
        (
            "/search?q=alert&group=job",
            &["<mark>alert</mark>", "<table class=\"groups\">", "&lt;b&gt;bold test&lt;/b&gt;"],
        ),
        ("/tests?name=%5Bsig-network%5D%20DNS%20resolves", &["<section class=\"test-job\">", "class=\"cell fail\""]),
    ];
    for (path, expect) in pages {
        let url = format!("{}{path}", srv.base);
        let (dom, stderr) = chromium(profile.path(), &["--dump-dom", &url]);
        assert!(dom.contains("</html>"), "{path}: no DOM dumped; stderr:\n{stderr}");
        for e in *expect {
            assert!(dom.contains(e), "{path}: DOM lacks {e}");
        }
        // Hostile text never became elements.
        assert!(!dom.contains("<script"), "{path}: a script element is in the DOM");
        assert!(!dom.contains("<img"), "{path}: an img element is in the DOM");
        assert!(!dom.contains("<b>bold"), "{path}: raw markup is in the DOM");
        let problems = console_problems(&stderr);
        assert!(problems.is_empty(), "{path}: console problems:\n{}", problems.join("\n"));
    }
    // A screenshot of the job page; kept when CITRIAGE_WEB_SCREENSHOT names a file.
    let shot_dir = tempfile::tempdir().expect("shot dir");
    let shot = std::env::var_os("CITRIAGE_WEB_SCREENSHOT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| shot_dir.path().join("job.png"));
    let url = format!("{}/jobs/{GOOD_JOB}", srv.base);
    let (_, stderr) = chromium(
        profile.path(),
        &["--hide-scrollbars", "--window-size=1200,900", &format!("--screenshot={}", shot.display()), &url],
    );
    let png = std::fs::read(&shot).unwrap_or_else(|e| panic!("no screenshot ({e}); stderr:\n{stderr}"));
    assert!(png.starts_with(b"\x89PNG"), "screenshot is not a PNG");
    assert!(png.len() > 2000, "screenshot is suspiciously small");
}
