//! `citriage extract` returns every failure line the library finds (display caps are
//! announced, never applied to what is found), and the `bench mining` / `bench extract`
//! commands run on small fixtures written here.

mod common;

use std::path::Path;

use citriage_patterns::extract::{extract_log, ExtractConfig};
use common::bin;

/// A go test log with `n` failing tests, each printing two assertion lines first.
fn many_failures(n: usize) -> String {
    let mut s = String::from("go test ./...\n");
    for i in 0..n {
        s.push_str(&format!("=== RUN   TestCase{i}\n"));
        s.push_str(&format!("    case_test.go:{}: expected {i}, got {}\n", 10 + i, i + 1));
        s.push_str("        more detail of the failure\n");
        s.push_str(&format!("--- FAIL: TestCase{i} (0.0{}s)\n", i % 10));
        s.push_str(&format!("=== RUN   TestOk{i}\n--- PASS: TestOk{i} (0.00s)\n"));
    }
    s.push_str("FAIL\nFAIL\texample.com/pkg\t0.5s\n");
    s
}

fn extract(args: &[&str]) -> std::process::Output {
    bin().arg("--quiet").arg("extract").args(args).output().expect("runs")
}

fn library_lines(fail: &[u8], pass: Option<&[u8]>) -> Vec<usize> {
    let cfg = ExtractConfig { max_excerpts: usize::MAX, ..ExtractConfig::default() };
    extract_log(fail, pass, "x", &cfg).lines
}

#[test]
fn extract_returns_everything_and_says_when_display_is_cut() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("fail.log");
    let text = many_failures(40);
    std::fs::write(&log, &text).unwrap();
    let want = library_lines(text.as_bytes(), None);
    assert!(want.len() > 100, "{}", want.len());

    // JSON: every excerpt and every line
    let o = bin().args(["--quiet", "--format", "json", "extract"]).arg(&log).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let got: Vec<usize> = v["lines"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as usize).collect();
    assert_eq!(got, want);
    let in_excerpts: usize =
        v["excerpts"].as_array().unwrap().iter().map(|e| e["lines"].as_array().unwrap().len()).sum();
    assert!(in_excerpts >= want.len());
    assert_eq!(v["texts_cut"], 0);

    // text: cut for display, and says so with the way to see all
    let o = extract(&[log.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains(&format!("{} failure line(s)", want.len())), "{out}");
    assert!(out.contains("Output cut:") && out.contains("--all") && out.contains("--format json"), "{out}");
    let o = extract(&[log.to_str().unwrap(), "--all"]);
    let all = String::from_utf8_lossy(&o.stdout);
    assert!(!all.contains("Output cut:"), "{all}");
    assert!(all.contains("case_test.go:49: expected 39, got 40"), "last failure shown with --all");

    // --lines: the scorer's format, the same lines
    let o = extract(&[log.to_str().unwrap(), "--lines"]);
    let mut from_ranges = Vec::new();
    for row in String::from_utf8_lossy(&o.stdout).lines() {
        let (a, b) = row.split_once('-').unwrap_or((row, row));
        from_ranges.extend(a.parse::<usize>().unwrap()..=b.parse::<usize>().unwrap());
    }
    assert_eq!(from_ranges, want);
}

#[test]
fn extract_with_a_passing_log_and_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let pass = "[INFO] Building\n[ERROR] known flaky warning\n[INFO] BUILD SUCCESS\n";
    let fail = "[INFO] Building\n[ERROR] known flaky warning\n[ERROR] /src/A.java:[3,13] cannot find symbol\n  symbol:   method foo()\n[INFO] BUILD FAILURE\n";
    std::fs::write(dir.path().join("pass.log"), pass).unwrap();
    std::fs::write(dir.path().join("fail.log"), fail).unwrap();
    let p = dir.path();
    let o = extract(&[p.join("fail.log").to_str().unwrap(), "--pass", p.join("pass.log").to_str().unwrap(), "--lines"]);
    assert!(o.status.success());
    assert_eq!(String::from_utf8_lossy(&o.stdout), "3-4\n");
    assert_eq!(library_lines(fail.as_bytes(), Some(pass.as_bytes())), vec![3, 4]);
    let missing = p.join("nope.log");
    let o = extract(&[missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("nope.log"));
}

fn write_case(root: &Path, name: &str, fail: &str, pass: &str, truth: &str) {
    let d = root.join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("fail.log"), fail).unwrap();
    std::fs::write(d.join("pass.log"), pass).unwrap();
    std::fs::write(d.join("groundtruth"), truth).unwrap();
}

#[test]
fn bench_extract_cross_validates_fixture_cases() {
    let top = tempfile::tempdir().unwrap();
    let dir = top.path().join("split");
    for (i, project) in ["alpha", "beta", "gamma", "delta"].iter().enumerate() {
        let fail = format!(
            "[INFO] Building {project}\n[INFO] Compiling {i} files\n[ERROR] /src/{project}/A.java:[{i},13] cannot find symbol\n  symbol:   method m{i}()\n[INFO] BUILD FAILURE\n"
        );
        let pass = format!("[INFO] Building {project}\n[INFO] Compiling {i} files\n[INFO] BUILD SUCCESS\n");
        write_case(&dir, &format!("{project}_{i}"), &fail, &pass, "DEFAULT\nE 3-4\n");
    }
    let out = top.path().join("pred");
    let o = bin()
        .args(["--quiet", "--format", "json", "bench", "extract", "--folds", "2", "--cases"])
        .arg(&dir)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["cases"], 4);
    for m in v["modes"].as_array().unwrap() {
        assert_eq!(m["cli_macro_f1"], 1.0, "{m}");
        assert_eq!(m["cross_validation"]["folds"].as_array().unwrap().len(), 2);
    }
    assert_eq!(std::fs::read_to_string(out.join("with-pass/split__alpha_0.txt")).unwrap(), "3\n4\n");
    // too few cases for the folds: bad input
    let o = bin().args(["--quiet", "bench", "extract", "--folds", "9", "--cases"]).arg(&dir).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn bench_mining_runs_leave_one_system_out_on_fixture_systems() {
    let dir = tempfile::tempdir().unwrap();
    let systems = [
        ("Alpha", vec![("open file {i} ok", "open file <*> ok"), ("close session {i}", "close session <*>")]),
        ("Beta", vec![("user {i} logged in", "user <*> logged in"), ("VM Paused id={i}", "VM Paused id=<*>")]),
        ("Gamma", vec![("sent {i} bytes to 10.0.0.{i}", "sent <*> bytes to <*>"), ("timeout", "timeout")]),
    ];
    for (name, templates) in &systems {
        let d = dir.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        let mut csv = String::from("LineId,Content,EventId,EventTemplate\n");
        for i in 0..20 {
            let (line, t) = templates[i % 2];
            csv.push_str(&format!("{},\"{}\",E{},\"{}\"\n", i + 1, line.replace("{i}", &i.to_string()), i % 2, t));
        }
        std::fs::write(d.join(format!("{name}_2k.log_structured.csv")), csv).unwrap();
    }
    let out = dir.path().join("pred");
    let o = bin()
        .args(["--quiet", "--format", "json", "bench", "mining", "--repeat", "2", "--data"])
        .arg(dir.path())
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let folds = v["leave_one_system_out"]["folds"].as_array().unwrap();
    assert_eq!(folds.len(), 3);
    assert!(folds.iter().all(|f| f["held_out"]["ga"] == 1.0), "{folds:?}");
    assert_eq!(std::fs::read_to_string(out.join("Alpha.pred")).unwrap().lines().count(), 20);
    let o = bin().args(["--quiet", "bench", "mining", "--data"]).arg(dir.path().join("nothing")).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn signatures_lists_the_catalogue_and_matches_a_log() {
    let o = bin().args(["--quiet", "--format", "json", "signatures", "--scope", "payload"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let sigs = v["signatures"].as_array().unwrap();
    let all = citriage_patterns::signatures::Catalogue::builtin_payload();
    assert_eq!(sigs.len(), all.len());
    assert!(sigs.iter().any(|s| s["id"] == "cloud-quota-exhausted" && s["transient"] == true));

    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("build-log.txt");
    std::fs::write(&log, "starting\nerror: unknown flag: --ip-family\ndone\n").unwrap();
    let o = bin().args(["--quiet", "--format", "json", "signatures", "--match"]).arg(&log).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let m = v["matches"].as_array().unwrap();
    assert_eq!(m.len(), 1, "{v}");
    assert_eq!(m[0]["id"], "unknown-flag");
    assert_eq!(m[0]["evidence"][0]["line"], 2);

    // a user file that does not parse, and a class that does not exist, are input errors
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[[signature]]\nid='x'\n").unwrap();
    let o = bin().args(["--quiet", "signatures", "--signatures"]).arg(&bad).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bad.toml"));
    let o = bin().args(["--quiet", "signatures", "--class", "weather"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}
