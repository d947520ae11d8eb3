//! End-to-end tests of what the commands record in the store's documents: triage
//! reports (`triage --out`, `demo`), payload analyses (`payload`, `--no-store`),
//! verifier results (`verify FILE`, `verify --stored`) and the `reports` command
//! that lists and prints them. Each test runs the binary on a real SQLite store in a
//! temporary folder and reads the store back with SQLite.

use std::path::Path;

mod common;

use common::{bin, run, stderr};

/// (kind, key, media type, title, as_of, body) of every stored document, read with SQLite.
type Row = (String, String, String, String, String, String);

fn documents(db: &Path) -> Vec<Row> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut st = c
        .prepare("SELECT kind, key, media_type, title, as_of, body FROM documents ORDER BY kind, key, media_type")
        .unwrap();
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?))).unwrap();
    rows.map(|r| r.unwrap()).collect()
}

fn body(db: &Path, kind: &str, key: &str, media_type: &str) -> String {
    documents(db)
        .into_iter()
        .find(|d| d.0 == kind && d.1 == key && d.2 == media_type)
        .unwrap_or_else(|| panic!("no {kind} {key} {media_type} in {}", db.display()))
        .5
}

/// Two days of a failures snapshot and one of flakes, imported into `db`.
fn snapshots(dir: &Path, db: &Path) {
    let files = [
        ("failures-2026-11-20.json", r#"{"ci-a": {"failing_days": 10}, "ci-b": {"failing_days": 3}}"#),
        (
            "failures-2026-11-21.json",
            r#"{"ci-a": {"failing_days": 11}, "ci-c": {"failing_days": 1}, "pr:pull-kubernetes-unit": {"failing_days": 4}}"#,
        ),
        (
            "flakes-2026-11-21.json",
            r#"{"ci-a": {"consistency": 0.9, "flakes": 3, "test_flakes": {"Up": 2, "TestFoo": 1}}}"#,
        ),
    ];
    for (name, text) in files {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        let o = run(db, &["import", p.to_str().unwrap()]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
    }
}

fn triage(db: &Path, dataset: &str, out: &Path) {
    let o = run(db, &["triage", "--dataset", dataset, "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn triage_out_records_the_report_once_with_the_written_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    snapshots(dir.path(), &db);
    let out = dir.path().join("rep");
    triage(&db, "failures", &out);
    let first = documents(&db);
    assert_eq!(first.len(), 2, "{:?}", first.iter().map(|d| (&d.0, &d.1, &d.2)).collect::<Vec<_>>());
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let json = std::fs::read_to_string(out.join("report.json")).unwrap();
    assert_eq!(body(&db, "triage", "failures/2026-11-21", "text/markdown"), md);
    assert_eq!(body(&db, "triage", "failures/2026-11-21", "application/json"), json);
    for d in &first {
        assert_eq!((d.3.as_str(), d.4.as_str()), ("Failures triage 2026-11-21", "2026-11-21"));
    }
    // Triaging again replaces the documents: still one copy of each.
    triage(&db, "failures", &out);
    assert_eq!(documents(&db), first);
    // `reports show` prints the stored bytes.
    let o = run(&db, &["reports", "show", "triage", "failures/2026-11-21"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(String::from_utf8(o.stdout).unwrap(), md, "Markdown is the default type");
    let o = run(&db, &["reports", "show", "triage", "failures/2026-11-21", "--media-type", "application/json"]);
    assert_eq!(String::from_utf8(o.stdout).unwrap(), json);
    let o = run(&db, &["reports", "show", "triage", "failures/1999-01-01"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("failures/1999-01-01") && stderr(&o).contains(" reports` lists them"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn reports_lists_documents_in_a_deterministic_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    snapshots(dir.path(), &db);
    // An older failures report too: triage the 2026-11-20 file against nothing older.
    let o = run(
        &db,
        &[
            "triage",
            "--snapshot",
            dir.path().join("failures-2026-11-20.json").to_str().unwrap(),
            "--out",
            dir.path().join("old").to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    triage(&db, "flakes", &dir.path().join("flakes"));
    triage(&db, "failures", &dir.path().join("failures"));
    let o = run(&db, &["verify", dir.path().join("flakes/report.md").to_str().unwrap(), "--offline"]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    let list = run(&db, &["--format", "json", "reports"]);
    assert!(list.status.success(), "{}", stderr(&list));
    let v: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let got: Vec<(String, String, String)> = v["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            assert!(d["bytes"].as_u64().unwrap() > 0 && d["title"].is_string());
            let s = |k: &str| d[k].as_str().unwrap().to_string();
            (s("kind"), s("key"), s("media_type"))
        })
        .collect();
    // By kind, then newest as_of first, then key, then media type.
    let want: Vec<(String, String, String)> = [
        ("triage", "failures/2026-11-21", "application/json"),
        ("triage", "failures/2026-11-21", "text/markdown"),
        ("triage", "flakes/2026-11-21", "application/json"),
        ("triage", "flakes/2026-11-21", "text/markdown"),
        ("triage", "failures/2026-11-20", "application/json"),
        ("triage", "failures/2026-11-20", "text/markdown"),
        ("verify", "triage/flakes/2026-11-21", "application/json"),
    ]
    .iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    .collect();
    assert_eq!(got, want);
    // The same store lists the same bytes, in text and JSON; --kind filters.
    assert_eq!(run(&db, &["--format", "json", "reports"]).stdout, list.stdout);
    let text = run(&db, &["reports"]);
    assert_eq!(text.stdout, run(&db, &["reports"]).stdout);
    let lines: Vec<String> = String::from_utf8(text.stdout).unwrap().lines().map(str::to_string).collect();
    assert_eq!(lines.len(), want.len());
    for (line, (kind, key, media)) in lines.iter().zip(&want) {
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert_eq!((cols[0], cols[1], cols[2]), (kind.as_str(), key.as_str(), media.as_str()), "{line}");
    }
    let o = run(&db, &["--format", "json", "reports", "--kind", "verify"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["documents"].as_array().unwrap().len(), 1);
    assert_eq!(v["documents"][0]["title"], "Verification of triage/flakes/2026-11-21");
}

#[test]
fn verify_records_its_result_under_the_stored_documents_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    snapshots(dir.path(), &db);
    let out = dir.path().join("rep");
    triage(&db, "failures", &out);
    let report = out.join("report.md");
    let o = run(&db, &["--format", "json", "verify", report.to_str().unwrap(), "--offline"]);
    let code = o.status.code();
    assert!(matches!(code, Some(0 | 1)), "{}", stderr(&o));
    let printed = String::from_utf8(o.stdout).unwrap();
    let v: serde_json::Value = serde_json::from_str(&printed).unwrap();
    assert_eq!(v["exit_code"].as_i64().map(|c| c as i32), code);
    let docs = documents(&db);
    let rec = docs.iter().find(|d| d.0 == "verify").expect("a verifier result is recorded");
    assert_eq!(rec.1, "triage/failures/2026-11-21", "keyed by the stored report it equals");
    assert_eq!(rec.2, "application/json");
    assert_eq!(rec.3, "Verification of triage/failures/2026-11-21");
    assert_eq!(rec.4, "2026-11-21", "the verified report's date");
    assert_eq!(rec.5, printed, "the recorded result is what --format json printed");

    // A file that is not a stored document is keyed by its name, dated by what it states.
    let edited = dir.path().join("edited.md");
    std::fs::write(&edited, format!("{}\nOne more line.\n", std::fs::read_to_string(&report).unwrap())).unwrap();
    let o = run(&db, &["verify", edited.to_str().unwrap(), "--offline"]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    let docs = documents(&db);
    let rec = docs.iter().find(|d| d.0 == "verify" && d.1 == "edited.md").expect("keyed by the file name");
    assert_eq!(rec.4, "2026-11-21", "the date the report states");
    assert_eq!(docs.iter().filter(|d| d.0 == "verify").count(), 2);

    // --stored verifies the stored Markdown: same verdict as the file it was written to.
    let o = run(&db, &["--format", "json", "verify", "--stored", "triage/failures/2026-11-21", "--offline"]);
    assert_eq!(o.status.code(), code, "{}", stderr(&o));
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["report"], "triage/failures/2026-11-21");
    assert_eq!((&s["verdict"], &s["findings"], &s["unchecked"]), (&v["verdict"], &v["findings"], &v["unchecked"]));
    assert_eq!(
        body(&db, "verify", "triage/failures/2026-11-21", "application/json"),
        String::from_utf8(o.stdout).unwrap()
    );
    for bad in ["triage/failures/1999-01-01", "nokind"] {
        let o = run(&db, &["verify", "--stored", bad, "--offline"]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        assert!(stderr(&o).contains(bad) && !stderr(&o).contains("panicked"), "{}", stderr(&o));
    }
    let o = run(&db, &["verify", "--offline"]);
    assert_eq!(o.status.code(), Some(2), "a file or --stored is required");

    // Without a store the file is still verified; nothing is recorded or created.
    let none = dir.path().join("absent").join("none.db");
    let o = run(&none, &["--format", "json", "verify", report.to_str().unwrap(), "--offline"]);
    assert_eq!(o.status.code(), code, "{}", stderr(&o));
    assert_eq!(serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()["verdict"], v["verdict"]);
    assert!(stderr(&o).contains("not recorded") && stderr(&o).contains("none.db"), "{}", stderr(&o));
    assert!(!none.exists(), "verify created no store");
    let o = run(&none, &["verify", "--stored", "triage/failures/2026-11-21"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn payload_records_json_html_and_markdown_unless_no_store() {
    let dir = tempfile::tempdir().unwrap();
    let world = dir.path().join("world");
    let p = citriage_synth::SynthParams::preset("tiny").unwrap();
    citriage_synth::generate(&p, &world, &mut |_| {}).unwrap();
    let truth: serde_json::Value = serde_json::from_slice(&std::fs::read(world.join("truth.json")).unwrap()).unwrap();
    let tag = truth["payloads"]["tags"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["culprit"].is_object())
        .expect("the world plants a culprit")["tag"]
        .as_str()
        .unwrap()
        .to_string();
    let db = dir.path().join("s.db");
    let out = dir.path().join("out");
    let o = bin()
        .arg("--db")
        .arg(&db)
        .args(["--quiet", "--format", "json", "payload", &tag, "--from"])
        .arg(&world)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let printed = String::from_utf8(o.stdout).unwrap();
    let analysis: serde_json::Value = serde_json::from_str(&printed).unwrap();
    let docs = documents(&db);
    assert_eq!(
        docs.iter().map(|d| (d.0.as_str(), d.1.as_str(), d.2.as_str())).collect::<Vec<_>>(),
        vec![
            ("payload", tag.as_str(), "application/json"),
            ("payload", tag.as_str(), "text/html"),
            ("payload", tag.as_str(), "text/markdown"),
        ]
    );
    assert_eq!(docs[0].5, printed, "the JSON document is what --format json printed");
    let file = |suffix: &str| std::fs::read_to_string(out.join(format!("payload-analysis-{tag}{suffix}"))).unwrap();
    assert_eq!(docs[1].5, file("-summary.html"));
    assert_eq!(docs[2].5, file(".md"));
    let created = analysis["payload"]["created"].as_str().expect("the tag carries its creation time");
    for d in &docs {
        assert_eq!(d.3, format!("Payload {tag}"));
        assert_eq!(d.4, created);
    }
    // Analysing again replaces, --no-store records nothing (and creates no store).
    let again = bin().arg("--db").arg(&db).args(["--quiet", "payload", &tag, "--from"]).arg(&world).output().unwrap();
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(documents(&db), docs);
    let other = dir.path().join("other.db");
    let o = bin()
        .arg("--db")
        .arg(&other)
        .args(["--quiet", "payload", &tag, "--no-store", "--from"])
        .arg(&world)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains(&tag));
    assert!(!other.exists(), "--no-store opened no store");
}

#[test]
fn demo_records_reports_payloads_and_verifier_results() {
    let d = tempfile::tempdir().unwrap();
    let o = bin().args(["--quiet", "--format", "json", "demo", "--out"]).arg(d.path()).output().unwrap();
    assert!(o.status.success(), "the demo succeeds despite verifier findings: {}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let bundled = d.path().join("citriage.db");
    let world = d.path().join("world.db");
    for (db, dir) in [(&bundled, ""), (&world, "world-")] {
        for ds in ["failures", "flakes"] {
            let md = std::fs::read_to_string(d.path().join(format!("{dir}{ds}/report.md"))).unwrap();
            assert_eq!(body(db, "triage", &format!("{ds}/2026-11-21"), "text/markdown"), md);
            let rec = body(db, "verify", &format!("triage/{ds}/2026-11-21"), "application/json");
            let r: serde_json::Value = serde_json::from_str(&rec).unwrap();
            assert_eq!(r["report"], format!("triage/{ds}/2026-11-21"));
        }
    }
    // The summary reports every verification, findings included.
    let checks = v["verifications"].as_array().unwrap();
    assert_eq!(checks.len(), 4);
    for c in &checks[..2] {
        assert_eq!(c["verdict"], "pass", "the bundled snapshot-only reports pass: {c}");
    }
    for c in &checks[2..] {
        assert_eq!(c["store"], "world.db");
        let recorded: serde_json::Value =
            serde_json::from_str(&body(&world, "verify", c["key"].as_str().unwrap(), "application/json")).unwrap();
        assert_eq!(c["verdict"], recorded["verdict"]);
        let n: u64 = c["findings"].as_object().unwrap().values().map(|n| n.as_u64().unwrap()).sum();
        assert_eq!(n as usize, recorded["findings"].as_array().unwrap().len());
    }
    // The world's payload stream is analysed and recorded: three documents a payload.
    let payloads = v["payloads"].as_array().unwrap();
    assert!(payloads.len() >= 5, "{payloads:?}");
    let stored: Vec<Row> = documents(&world).into_iter().filter(|d| d.0 == "payload").collect();
    assert_eq!(stored.len(), 3 * payloads.len());
    for p in payloads {
        let tag = p["tag"].as_str().unwrap();
        let a: serde_json::Value = serde_json::from_str(&body(&world, "payload", tag, "application/json")).unwrap();
        assert_eq!(a["payload"]["tag"], tag);
    }
    assert!(documents(&bundled).iter().all(|d| d.0 != "payload"), "payloads belong to the world store");
}
