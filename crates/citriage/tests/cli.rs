//! End-to-end tests of the `citriage` binary: bad input (exit 2, named job and field,
//! nothing stored), imports over HTTP from a local server (gzip, 404, 429 with
//! Retry-After, 500 then success, truncated bodies), drift with the integrity check,
//! and byte-identical output for identical input.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

mod common;

use common::{bin, run, stderr};

fn stored(db: &Path) -> usize {
    let o = run(db, &["--format", "json", "snapshots"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["snapshots"].as_array().unwrap().len()
}

#[test]
fn bad_snapshots_exit_2_name_the_field_and_store_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let good = dir.path().join("failures-2026-11-20.json");
    std::fs::write(&good, r#"{"ci-a": {"failing_days": 40}}"#).unwrap();
    let o = run(&db, &["import", good.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stored(&db), 1);
    let cases: &[(&str, &str, &str)] = &[
        ("not-object", "[1, 2]", "expected a JSON object"),
        ("wrong-type", r#"{"ci-a": {"failing_days": "forty"}}"#, r#"job "ci-a", field "failing_days""#),
        (
            "negative",
            r#"{"ci-b": {"failing_days": -1}}"#,
            r#"job "ci-b", field "failing_days": expected a non-negative integer, found -1"#,
        ),
        ("fraction", r#"{"ci-b": {"failing_days": 1.5}}"#, "non-integer 1.5"),
        (
            "consistency",
            r#"{"ci-c": {"consistency": 1.5, "flakes": 0, "test_flakes": null}}"#,
            r#"job "ci-c", field "consistency": 1.5 is outside 0..1"#,
        ),
        ("nan", r#"{"ci-c": {"consistency": NaN, "flakes": 0, "test_flakes": null}}"#, "NaN"),
        ("empty", "", "the file is empty"),
        ("truncated", r#"{"ci-a": {"failing_days": 4"#, "truncated"),
        ("duplicate", r#"{"ci-a": {"failing_days": 4}, "ci-a": {"failing_days": 5}}"#, r#"job "ci-a" appears twice"#),
        (
            "dup-field",
            r#"{"ci-a": {"failing_days": 4, "failing_days": 5}}"#,
            r#"job "ci-a", field "failing_days" appears twice"#,
        ),
    ];
    for (name, body, want) in cases {
        let p = dir.path().join(format!("{name}.json"));
        std::fs::write(&p, body).unwrap();
        // A good file alongside a bad one: nothing of the batch is stored.
        let o = run(&db, &["import", good.to_str().unwrap(), p.to_str().unwrap(), "--date", "2026-11-21"]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains(want), "{name}: {e}");
        assert!(e.contains(&format!("{name}.json")), "{name}: the message names the file: {e}");
        assert!(!e.contains("panicked"), "{name}: {e}");
    }
    assert_eq!(stored(&db), 1, "no bad import stored anything");
    let o = run(&db, &["import", dir.path().join("missing.json").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("missing.json"));
    // Bad rules and config files are bad input too.
    let rules = dir.path().join("rules.toml");
    std::fs::write(&rules, "[[rule]]\ncategory = 'x'\nwhen = 'contains('\n").unwrap();
    let o = run(
        &db,
        &[
            "triage",
            "--dataset",
            "failures",
            "--rules",
            rules.to_str().unwrap(),
            "--out",
            dir.path().join("o").to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("rule #1 (x)"), "{}", stderr(&o));
}

#[test]
fn drift_and_integrity_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let files = [
        (
            "failures-2026-11-18.json",
            r#"{"ci-gone-and-back": {"failing_days": 50}, "ci-steady": {"failing_days": 98}}"#,
        ),
        (
            "failures-2026-11-20.json",
            r#"{"ci-steady": {"failing_days": 100}, "ci-reset": {"failing_days": 60}, "ci-jump": {"failing_days": 40}, "ci-recovered": {"failing_days": 33}}"#,
        ),
        (
            "failures-2026-11-21.json",
            r#"{"ci-steady": {"failing_days": 101}, "ci-reset": {"failing_days": 31}, "ci-jump": {"failing_days": 45}, "ci-new": {"failing_days": 2}, "ci-gone-and-back": {"failing_days": 53}}"#,
        ),
    ];
    for (n, body) in files {
        let p = dir.path().join(n);
        std::fs::write(&p, body).unwrap();
        assert!(run(&db, &["import", p.to_str().unwrap()]).status.success());
    }
    let o = run(&db, &["--format", "json", "drift", "--dataset", "failures"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let d: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(d["days_between"], 1);
    let names = |k: &str| -> Vec<String> {
        d[k].as_array().unwrap().iter().map(|x| x["job"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(names("added"), vec!["ci-gone-and-back", "ci-new"]);
    assert_eq!(names("removed"), vec!["ci-recovered"]);
    assert_eq!(names("reappeared"), vec!["ci-gone-and-back"]);
    assert_eq!(d["reappeared"][0]["last_listed"], "2026-11-18");
    let integ = &d["integrity"];
    assert_eq!(integ["common"], 3);
    assert_eq!(integ["consistent"], 1);
    let v: Vec<(String, String)> = integ["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["job"].as_str().unwrap().into(), x["kind"].as_str().unwrap().into()))
        .collect();
    assert_eq!(v, vec![("ci-jump".to_string(), "jumped".to_string()), ("ci-reset".to_string(), "reset".to_string())]);
    // The triage report carries the same drift.
    let out = dir.path().join("rep");
    let o = run(&db, &["triage", "--dataset", "failures", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let txt = std::fs::read_to_string(out.join("drift-from-2026-11-20.txt")).unwrap();
    assert!(txt.contains("Integrity: 1 of 3 common jobs grew by exactly 1 day(s); 2 did not"), "{txt}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("| `ci-reset` | 60 | 31 | 61 | reset (passed in between) |"), "{md}");
    assert!(!md.contains("TODO"));
}

#[test]
fn triage_output_is_byte_identical_for_identical_input() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    for d in [&a, &b] {
        let o = bin().args(["--quiet", "demo", "--out"]).arg(d.path().join("demo")).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let mut compared = 0;
    for ds in ["failures", "flakes"] {
        let da = a.path().join("demo").join(ds);
        let mut names: Vec<PathBuf> = std::fs::read_dir(&da).unwrap().map(|e| e.unwrap().path()).collect();
        names.sort();
        assert!(names.len() >= 6, "{ds}: {names:?}");
        for p in names {
            let other = b.path().join("demo").join(ds).join(p.file_name().unwrap());
            assert_eq!(std::fs::read(&p).unwrap(), std::fs::read(&other).unwrap(), "{} differs", p.display());
            compared += 1;
        }
    }
    assert!(compared >= 13);
    // Running the demo again over the same store is idempotent: no duplicate snapshots.
    let db = a.path().join("demo").join("citriage.db");
    let o = bin().args(["--quiet", "demo", "--out"]).arg(a.path().join("demo")).output().unwrap();
    assert!(o.status.success());
    assert_eq!(stored(&db), 6);
}

#[test]
fn demo_report_has_every_section_and_planted_findings() {
    let d = tempfile::tempdir().unwrap();
    let o = bin().args(["--quiet", "--format", "json", "demo", "--out"]).arg(d.path()).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["reports"].as_array().unwrap().len(), 4, "bundled failures+flakes, world failures+flakes");
    let md = std::fs::read_to_string(d.path().join("failures/report.md")).unwrap();
    for section in [
        "## TL;DR",
        "## 1. The ",
        "## 2. Misclassifications",
        "## 3. Action plan",
        "Tier 0",
        "Tier 5",
        "## 4. Methodology",
        "## 5. Verifications",
        "### Evidence",
    ] {
        assert!(md.contains(section), "missing {section}");
    }
    assert!(md.contains("Brand-new lane"), "planted -ko35 family found");
    assert!(!md.contains("## 6. Lessons"), "no Lessons without a prior report");
    let picks = md.matches("\n### Pattern ").count();
    assert!((8..=12).contains(&picks), "{picks} patterns");
    let flakes = std::fs::read_to_string(d.path().join("flakes/report.md")).unwrap();
    assert!(flakes.contains("Harness step counted as a test"));
    assert!(flakes.contains("Consistency paradox"));
    // Every evidence id cited in the text is listed in the appendix.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("flakes/report.json")).unwrap()).unwrap();
    let ids: std::collections::BTreeSet<String> =
        json["evidence"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap().to_string()).collect();
    assert!(!ids.is_empty());
    for cap in flakes.split("](#ev-").skip(1) {
        let id = format!("ev-{}", &cap[..12]);
        assert!(ids.contains(&id), "{id} cited but not listed");
    }
    // The synthetic world's triage is backed by ingested builds.
    let world = std::fs::read_to_string(d.path().join("world-flakes/report.md")).unwrap();
    assert!(world.contains("Always-failing scored consistent"), "build-backed finding");
    assert!(
        world.contains("| build result | `https://prow.k8s.io/view/gs/kubernetes-ci-logs/"),
        "build evidence listed"
    );
    assert!(world.contains("Pass rate (n)"), "pattern tables carry build figures");
    // Each affected job is also rated from its builds, beside the dashboard's rating;
    // a job that fails every run is rated well by the dashboard and badly from builds.
    assert!(world.contains("| Severity | Corrected |"), "corrected rating column");
    let levels = ["critical", "severe", "warning", "moderate", "low", "good", "–"];
    let rows: Vec<Vec<&str>> = world
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| l.split(" | ").collect::<Vec<_>>())
        .filter(|c| c.len() == 8)
        .collect();
    assert!(!rows.is_empty(), "affected-job rows with build figures");
    for c in &rows {
        assert!(levels.contains(&c[3]), "corrected rating {:?} in {c:?}", c[3]);
    }
    assert!(rows.iter().any(|c| c[3] != "–" && c[2] != c[3]), "some corrected rating differs from the dashboard's");
    let top = std::fs::read_to_string(d.path().join("flakes/top-flaky-tests.txt")).unwrap();
    assert!(top.lines().next().unwrap().contains("jobs="));
}

/// A local HTTP server serving fixed responses by path.
fn serve(hits: Arc<AtomicUsize>) -> (String, std::thread::JoinHandle<()>) {
    let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
    let addr = format!("http://{}", server.server_addr().to_ip().unwrap());
    let h = std::thread::spawn(move || {
        let mut flaky = 0;
        let mut limited = 0;
        for mut req in server.incoming_requests() {
            hits.fetch_add(1, Ordering::SeqCst);
            let mut sink = Vec::new();
            let _ = req.as_reader().read_to_end(&mut sink);
            let url = req.url().to_string();
            let body_ok = br#"{"ci-kubernetes-e2e-gce": {"failing_days": 45}}"#.to_vec();
            let resp = match url.as_str() {
                "/k8s-metrics/failures-2026-11-21.json" => tiny_http::Response::from_data(body_ok),
                "/gz/failures-2026-11-21.json" => {
                    use std::io::Write;
                    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                    e.write_all(&body_ok).unwrap();
                    tiny_http::Response::from_data(e.finish().unwrap())
                        .with_header("Content-Encoding: gzip".parse::<tiny_http::Header>().unwrap())
                }
                "/flaky/failures-2026-11-21.json" => {
                    flaky += 1;
                    if flaky == 1 {
                        tiny_http::Response::from_data(b"oops".to_vec()).with_status_code(500)
                    } else {
                        tiny_http::Response::from_data(body_ok)
                    }
                }
                "/limited/failures-2026-11-21.json" => {
                    limited += 1;
                    if limited == 1 {
                        tiny_http::Response::from_data(b"slow down".to_vec())
                            .with_status_code(429)
                            .with_header("Retry-After: 1".parse::<tiny_http::Header>().unwrap())
                    } else {
                        tiny_http::Response::from_data(body_ok)
                    }
                }
                "/truncated/failures-2026-11-21.json" => {
                    tiny_http::Response::from_data(br#"{"ci-a": {"failing_da"#.to_vec())
                }
                "/stop" => {
                    let _ = req.respond(tiny_http::Response::from_data(Vec::new()));
                    break;
                }
                _ => tiny_http::Response::from_data(b"not found".to_vec()).with_status_code(404),
            };
            let _ = req.respond(resp);
        }
    });
    (addr, h)
}

#[test]
fn imports_over_http() {
    let hits = Arc::new(AtomicUsize::new(0));
    let (addr, handle) = serve(hits.clone());
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let url = |p: &str| format!("{addr}{p}");
    let o = run(&db, &["import", &url("/k8s-metrics/failures-2026-11-21.json")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&db, &["--format", "json", "import", &url("/gz/failures-2026-11-21.json")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["imported"][0]["snapshot"]["job_count"], 1);
    assert_eq!(v["imported"][0]["inserted"], false, "same content and date: already stored");
    let before = hits.load(Ordering::SeqCst);
    let o = run(&db, &["import", &url("/flaky/failures-2026-11-21.json"), "--date", "2026-11-22"]);
    assert!(o.status.success(), "500 then success: {}", stderr(&o));
    assert_eq!(hits.load(Ordering::SeqCst) - before, 2, "one retry after the 500");
    let t = std::time::Instant::now();
    let o = run(&db, &["import", &url("/limited/failures-2026-11-21.json"), "--date", "2026-11-23"]);
    assert!(o.status.success(), "429 then success: {}", stderr(&o));
    assert!(t.elapsed() >= std::time::Duration::from_millis(900), "Retry-After: 1 was honoured");
    let o = run(&db, &["import", &url("/nope/failures-latest.json")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("HTTP 404") && stderr(&o).contains("/nope/failures-latest.json"), "{}", stderr(&o));
    let o = run(&db, &["import", &url("/truncated/failures-2026-11-21.json")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("truncated"), "{}", stderr(&o));
    assert_eq!(stored(&db), 3);
    let _ = ureq_stop(&url("/stop"));
    handle.join().unwrap();
}

fn ureq_stop(url: &str) -> std::io::Result<()> {
    use std::io::Write;
    let rest = url.trim_start_matches("http://");
    let (host, path) = rest.split_once('/').unwrap();
    let mut s = std::net::TcpStream::connect(host)?;
    write!(s, "GET /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n")?;
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    Ok(())
}

#[test]
fn help_and_json_flags_exist() {
    let o = bin().arg("--help").output().unwrap();
    assert!(o.status.success());
    let h = String::from_utf8_lossy(&o.stdout);
    for c in ["demo", "import", "triage", "snapshots", "drift", "categorize", "bench"] {
        assert!(h.contains(c), "help lists {c}");
    }
    let o = bin()
        .args(["--format", "json", "categorize", "capz-1-33-windows", "pr:pull-kubernetes-unit"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["category"], "k/k-windows");
    assert_eq!(v[1]["category"], "k/k-unit");
    let o = bin().args(["triage", "--dataset", "bogus"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// A `fetch` killed with SIGKILL mid-way, then rerun, leaves the same store as an
/// uninterrupted fetch: no duplicates, no half-written build.
#[test]
#[cfg(unix)]
fn fetch_killed_then_resumed_equals_uninterrupted() {
    let dir = tempfile::tempdir().unwrap();
    let world = dir.path().join("world");
    let mut p = citriage_synth::SynthParams::preset("tiny").unwrap();
    p.jobs = 40;
    p.builds_per_job = 30;
    p.payloads = 0;
    citriage_synth::generate(&p, &world, &mut |_| {}).unwrap();
    let mirror = world.join("gcs/kubernetes-ci-logs");
    let fetch = |db: &Path| {
        let mut c = bin();
        c.arg("--db").arg(db).args(["--quiet", "fetch", "--all", "--concurrency", "1", "--mirror"]).arg(&mirror);
        c
    };
    let whole = dir.path().join("whole.db");
    assert!(fetch(&whole).output().unwrap().status.success());
    let killed = dir.path().join("killed.db");
    let mut child = fetch(&killed).stdout(std::process::Stdio::null()).spawn().unwrap();
    // Wait until some builds are committed, then kill -9.
    let t = std::time::Instant::now();
    loop {
        std::thread::sleep(std::time::Duration::from_millis(20));
        let n = rusqlite::Connection::open(&killed)
            .and_then(|c| c.query_row("SELECT count(*) FROM builds", [], |r| r.get::<_, i64>(0)))
            .unwrap_or(0);
        if n >= 50 || t.elapsed().as_secs() > 60 {
            break;
        }
    }
    let _ = child.kill();
    let status = child.wait().unwrap();
    let partial: i64 = rusqlite::Connection::open(&killed)
        .unwrap()
        .query_row("SELECT count(*) FROM builds", [], |r| r.get(0))
        .unwrap();
    let total: i64 =
        rusqlite::Connection::open(&whole).unwrap().query_row("SELECT count(*) FROM builds", [], |r| r.get(0)).unwrap();
    eprintln!("killed after {partial} of {total} builds ({status})");
    assert!(!status.success() || partial == total, "killed before finishing (or finished first: {partial}/{total})");
    assert!(fetch(&killed).output().unwrap().status.success());
    let dump = |db: &Path| -> Vec<String> {
        let c = rusqlite::Connection::open(db).unwrap();
        let mut out = Vec::new();
        for sql in [
            "SELECT bucket, path, job, build_id, kind, pr, commit_sha, started, finished, result, problems, complete FROM builds ORDER BY bucket, path",
            "SELECT b.path, t.seq, t.name, t.status, t.failure_text, t.kettle_name FROM test_results t JOIN builds b ON b.id = t.build ORDER BY b.path, t.seq",
            "SELECT b.path, a.path, a.size FROM artifacts a JOIN builds b ON b.id = a.build ORDER BY b.path, a.path",
        ] {
            let mut st = c.prepare(sql).unwrap();
            let n = st.column_count();
            let rows = st
                .query_map([], |r| {
                    let mut v = Vec::new();
                    for i in 0..n {
                        v.push(format!("{:?}", r.get_ref(i)?));
                    }
                    Ok(v.join("|"))
                })
                .unwrap();
            out.extend(rows.map(|r| r.unwrap()));
        }
        out
    };
    let (a, b) = (dump(&whole), dump(&killed));
    assert_eq!(a.len(), b.len());
    assert!(a == b, "the resumed store differs from the uninterrupted one");
}

/// `citriage payload` offline over a synthetic world: the evaluation ranks every planted
/// culprit first with no false revert, and one payload's reports are written.
#[test]
fn payload_commands_over_a_synthetic_world() {
    let dir = tempfile::tempdir().unwrap();
    let world = dir.path().join("world");
    let p = citriage_synth::SynthParams::preset("tiny").unwrap();
    citriage_synth::generate(&p, &world, &mut |_| {}).unwrap();
    let o = bin().args(["--quiet", "--format", "json", "payload", "eval", "--from"]).arg(&world).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["culprit_payloads"].as_u64().unwrap() >= 1);
    assert!(v["culprits_present"].as_u64().unwrap() >= 1);
    assert_eq!(v["culprit_top1"], v["culprits_present"], "every culprit present in the evidence ranked first");
    assert_eq!(v["false_reverts"], 0);
    assert_eq!(v["errors"], 0);
    let tag = v["rows"].as_array().unwrap().iter().find(|r| r["culprits"][0]["rank"] == 1).unwrap()["tag"]
        .as_str()
        .unwrap()
        .to_string();
    let out = dir.path().join("out");
    let o = bin().args(["--quiet", "payload", &tag, "--from"]).arg(&world).arg("--out").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("STAGE REVERT"));
    let files: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(files.iter().any(|f| f.ends_with(".html")) && files.iter().any(|f| f.ends_with(".yaml")), "{files:?}");
    let o = bin().args(["payload", &tag, "--from"]).arg(dir.path().join("missing")).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// Every evidence id a triage report cites is in the store's ledger and can be looked up.
#[test]
fn report_evidence_is_in_the_ledger() {
    let d = tempfile::tempdir().unwrap();
    let o = bin().args(["--quiet", "demo", "--out"]).arg(d.path()).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(d.path().join("world-flakes/report.md")).unwrap();
    let ids: std::collections::BTreeSet<String> =
        md.split("](#ev-").skip(1).map(|c| format!("ev-{}", &c[..12])).collect();
    assert!(ids.len() > 5);
    let db = d.path().join("world.db");
    let mut args: Vec<String> = vec!["--format".into(), "json".into(), "evidence".into()];
    args.extend(ids.iter().cloned());
    let o = run(&db, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), ids.len());
    assert!(v.as_array().unwrap().iter().all(|e| e["read_at"].as_str().is_some_and(|r| r.ends_with('Z'))));
    let o = run(&db, &["evidence", "ev-000000000000"]);
    assert_eq!(o.status.code(), Some(2));
}

/// `brief` writes one investigation brief per selected cluster and a cross-check brief;
/// every evidence id they cite can be looked up in the ledger.
#[test]
fn briefs_cite_ledger_evidence() {
    let d = tempfile::tempdir().unwrap();
    let o = bin().args(["--quiet", "demo", "--out"]).arg(d.path()).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let db = d.path().join("world.db");
    let out = d.path().join("briefs");
    let o = run(&db, &["brief", "--dataset", "failures", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut files: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    files.sort();
    assert!(files.iter().filter(|f| f.starts_with("brief-")).count() >= 8, "{files:?}");
    assert!(files.contains(&"crosscheck.md".to_string()));
    let a = std::fs::read_to_string(out.join(files.iter().find(|f| f.starts_with("brief-A-")).unwrap())).unwrap();
    assert!(a.contains("## Already verified") && a.contains("https://prow.k8s.io/view/gs/"));
    let ids: std::collections::BTreeSet<String> = a
        .split("ev-")
        .skip(1)
        .filter(|c| c.len() >= 12 && c[..12].bytes().all(|b| b.is_ascii_hexdigit()))
        .map(|c| format!("ev-{}", &c[..12]))
        .collect();
    assert!(!ids.is_empty());
    for id in ids {
        let o = run(&db, &["evidence", &id]);
        assert!(o.status.success(), "{id} missing from the ledger: {}", stderr(&o));
    }
}

/// Linked fix PRs land in the tiered plan from their GitHub state (read here from the
/// store's cache, offline): merged → Tier 0 with what it fixes, open and blocked →
/// Tier 1 with the blocking label, closed unmerged → Tier 1 as a redo.
#[test]
fn linked_prs_fill_tier_0_and_tier_1() {
    let d = tempfile::tempdir().unwrap();
    let o = bin().args(["--quiet", "demo", "--out"]).arg(d.path()).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let db = d.path().join("world.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let pr = |n: u64, extra: serde_json::Value| {
        let mut v = serde_json::json!({
            "number": n, "title": format!("Fix number {n}"), "draft": false, "labels": [],
            "head": {"sha": "abc"}, "merge_commit_sha": null, "mergeable": true,
            "html_url": format!("https://github.com/kubernetes/kubernetes/pull/{n}"),
            "state": "open", "merged": false, "merged_at": null, "closed_at": null
        });
        for (k, val) in extra.as_object().unwrap() {
            v[k] = val.clone();
        }
        conn.execute(
            "INSERT INTO http_cache (url, status, etag, body, next, fetched_at) VALUES (?1, 200, NULL, ?2, NULL, 1795300000)",
            rusqlite::params![format!("https://api.github.com/repos/kubernetes/kubernetes/pulls/{n}"), serde_json::to_vec(&v).unwrap()],
        )
        .unwrap();
    };
    pr(
        101,
        serde_json::json!({"state": "closed", "merged": true, "merged_at": "2026-11-18T10:00:00Z", "closed_at": "2026-11-18T10:00:00Z"}),
    );
    pr(102, serde_json::json!({"labels": [{"name": "do-not-merge/hold"}]}));
    pr(103, serde_json::json!({"state": "closed", "closed_at": "2026-11-10T10:00:00Z"}));
    drop(conn);
    let links = d.path().join("links.toml");
    std::fs::write(
        &links,
        "[[link]]\nref = \"kubernetes/kubernetes#101\"\nmatches = \"ImagePullBackOff\"\n\n\
         [[link]]\nref = \"kubernetes/kubernetes#102\"\nmatches = \"(?i)boskos|could not allocate host\"\n\n\
         [[link]]\nref = \"kubernetes/kubernetes#103\"\nmatches = \"hyperdisk\"\n",
    )
    .unwrap();
    let out = d.path().join("rep");
    let triage_with_links = || {
        run(
            &db,
            &[
                "triage",
                "--dataset",
                "failures",
                "--links",
                links.to_str().unwrap(),
                "--offline",
                "--out",
                out.to_str().unwrap(),
            ],
        )
    };
    let o = triage_with_links();
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let tier = |name: &str| -> String {
        let start = md.find(name).unwrap();
        let rest = &md[start..];
        rest[..rest[4..].find("### ").map(|i| i + 4).unwrap_or(rest.len())].to_string()
    };
    let t0 = tier("### 🟢 Tier 0");
    assert!(
        t0.contains("kubernetes/kubernetes#101") && t0.contains("✅ MERGED 2026-11-18") && t0.contains("fixes Pattern"),
        "{t0}"
    );
    let t1 = tier("### 🟢 Tier 1");
    assert!(
        t1.contains("kubernetes/kubernetes#102") && t1.contains("do-not-merge/hold") && t1.contains("🟡 OPEN"),
        "{t1}"
    );
    assert!(t1.contains("kubernetes/kubernetes#103") && t1.contains("❌ CLOSED unmerged"), "{t1}");
    assert!(!t0.contains("#102") && !t0.contains("#103"));
    // A bad links file is bad input.
    std::fs::write(&links, "[[link]]\nref = \"not a ref\"\nmatches = \"x\"\n").unwrap();
    let o = triage_with_links();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// `code` answers from a git checkout the test creates, and records its evidence.
#[test]
fn code_evidence_from_a_checkout() {
    let git = |dir: &Path, args: &[&str]| Command::new("git").current_dir(dir).args(args).output();
    if git(Path::new("."), &["--version"]).is_err() {
        eprintln!("skipped: git is not installed");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("ti");
    std::fs::create_dir_all(repo.join("config/jobs/k")).unwrap();
    std::fs::write(
        repo.join("config/jobs/k/foo.yaml"),
        "periodics:\n- name: ci-foo-e2e\n  annotations:\n    testgrid-alert-email: foo@example.com\n",
    )
    .unwrap();
    std::fs::write(repo.join("config/jobs/OWNERS"), "approvers:\n- alice\nlabels:\n- sig/foo\n").unwrap();
    for args in [
        vec!["init", "-q"],
        vec!["-c", "user.email=a@b", "-c", "user.name=t", "add", "-A"],
        vec!["-c", "user.email=a@b", "-c", "user.name=t", "commit", "-qm", "add foo job"],
    ] {
        assert!(git(&repo, &args).unwrap().status.success());
    }
    let db = d.path().join("s.db");
    let co = format!("ti={}", repo.display());
    let o = run(&db, &["--format", "json", "code", "--checkout", &co, "job-config", "ci-foo-e2e"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["file"], "config/jobs/k/foo.yaml");
    assert_eq!(v[0]["line"], 2);
    let o = run(&db, &["code", "--checkout", &co, "owners", "config/jobs/k/foo.yaml"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("approvers: alice"), "{}", stderr(&o));
    let o = run(&db, &["code", "--checkout", &co, "line", "config/jobs/k/foo.yaml:99"]);
    assert_eq!(o.status.code(), Some(2), "past the end is bad input");
    let o = run(&db, &["code", "--checkout", &co, "job-config", "ci-nope"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&db, &["--format", "json", "evidence", "--locator", "job-config:ti@"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1, "the job-config answer is in the ledger");
}

#[test]
fn fetch_from_a_folder_of_buckets_names_them_and_creates_no_store() {
    let dir = tempfile::tempdir().expect("tmp");
    let gcs = dir.path().join("gcs");
    std::fs::create_dir_all(gcs.join("kubernetes-ci-logs/logs/ci-a/1")).expect("bucket");
    std::fs::create_dir_all(gcs.join("test-platform-results/pr-logs")).expect("bucket");
    let db = dir.path().join("never.db");
    let o = run(&db, &["fetch", "--mirror", gcs.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("kubernetes-ci-logs") && e.contains("test-platform-results") && e.contains("--mirror"), "{e}");
    assert!(!db.exists(), "no store is created for a refused fetch");
}
