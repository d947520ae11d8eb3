//! The HTML report in headless Chromium: it renders, logs no script error, and
//! every section is in the DOM. Skipped when `/usr/bin/chromium` is absent. Set
//! `CITRIAGE_PAYLOAD_SCREENSHOT=/path/shot.png` to also save a screenshot (and
//! the HTML as `/path/shot.png.html`).

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use citriage_payload::{analyze, AnalyzeOptions, GcsMirror, RecordedDir};
use common::*;

const CHROMIUM: &str = "/usr/bin/chromium";

fn run_chromium(args: &[String]) -> (String, String) {
    let mut child = Command::new(CHROMIUM)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if started.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            panic!("chromium did not finish in 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn html_report_renders_in_headless_chromium() {
    if !Path::new(CHROMIUM).exists() {
        eprintln!("skipped: {CHROMIUM} is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let world = build_world(dir.path());
    let a = analyze(&RecordedDir::open(&world), &GcsMirror::new(world.join("gcs")), &AnalyzeOptions::new(T4)).unwrap();
    let files = citriage_payload::write_reports(&a, &dir.path().join("out")).unwrap();
    let html = files.iter().find(|f| f.to_string_lossy().ends_with("-summary.html")).unwrap();
    let url = format!("file://{}", html.display());
    let profile = dir.path().join("profile");
    let (dom, log) =
        run_chromium(&[format!("--user-data-dir={}", profile.display()), "--dump-dom".into(), url.clone()]);
    for id in [
        "summary",
        "history",
        "failed-jobs",
        "root-causes",
        "suspects",
        "context",
        "action",
        "recommendations",
        "data-gaps",
    ] {
        assert!(dom.contains(&format!("<section id=\"{id}\">")), "section {id} missing from the rendered DOM");
    }
    assert!(dom.contains("STAGE REVERT"));
    assert!(dom.contains("pkg/widget/status.go:12"));
    for bad in ["Uncaught", "SyntaxError", "ReferenceError"] {
        assert!(!log.contains(bad), "script error in the console: {log}");
    }
    if let Ok(shot) = std::env::var("CITRIAGE_PAYLOAD_SCREENSHOT") {
        // The HTML next to the screenshot, for a closer look.
        std::fs::copy(html, format!("{shot}.html")).unwrap();
        let (_, log) = run_chromium(&[
            format!("--user-data-dir={}", profile.display()),
            "--window-size=1280,2000".into(),
            format!("--screenshot={shot}"),
            url,
        ]);
        assert!(Path::new(&shot).exists(), "no screenshot written: {log}");
    }
}
