//! `citriage fetch --testgrid URL`, `--testgrid-file FILE` and `watch`'s `testgrid`
//! sources, against a TestGrid-shaped server on 127.0.0.1 laid out like the real one
//! (`/<dashboard>/summary`, `/<dashboard>/table?tab=<tab>`) serving the tables a
//! synthetic world wrote, and on the real TestGrid table of `../shared` (skipped with
//! the reason printed when it is absent). Hostile answers and names exit 2 with a
//! message naming the file, URL or tab and what was wrong, and lose nothing stored.

mod common;
#[path = "../../citriage-ingest/tests/common/mod.rs"]
mod http;

use common::{run, stderr};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

const DASHBOARD: &str = "sig-release-master-blocking";

fn world() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w");
    let mut p = citriage_synth::SynthParams::preset("tiny").unwrap();
    p.payloads = 0;
    citriage_synth::generate(&p, &w, &mut |_| {}).unwrap();
    (dir, w)
}

/// A TestGrid on 127.0.0.1 answering from a folder laid out as
/// `<dashboard>/summary` and `<dashboard>/table/<tab>`; anything else is TestGrid's
/// HTML not-found page.
fn testgrid_server(root: PathBuf) -> http::Server {
    http::serve(move |url| {
        let (path, query) = url.split_once('?').unwrap_or((url, ""));
        let parts: Vec<String> = path.trim_start_matches('/').split('/').map(http::pct_decode).collect();
        let file = match parts.as_slice() {
            [d, s] if s == "summary" => Some(root.join(d).join("summary")),
            [d, t] if t == "table" => query
                .split('&')
                .find_map(|kv| kv.strip_prefix("tab="))
                .map(http::pct_decode)
                .filter(|tab| !tab.contains('/') && tab != ".." && tab != ".")
                .map(|tab| root.join(d).join("table").join(tab)),
            _ => None,
        };
        match file.and_then(|f| std::fs::read(f).ok()) {
            Some(body) => http::respond(200, body),
            None => http::respond(404, b"<html><head><title>Not found</title></head></html>".to_vec()),
        }
    })
}

fn tabs_of(dir: &Path) -> Vec<String> {
    let mut t: Vec<String> = std::fs::read_dir(dir.join("table"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into())
        .collect();
    t.sort();
    t
}

fn json(o: &Output) -> Value {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

/// Rows of a table of the store (`store info`).
fn rows(db: &Path, table: &str) -> u64 {
    let v = json(&run(db, &["--format", "json", "store", "info"]));
    v["tables"].as_array().unwrap().iter().find(|t| t["table"] == table).and_then(|t| t["rows"].as_u64()).unwrap_or(0)
}

/// The store's per-table digests (what "nothing lost, nothing partial" is checked on).
fn digests(db: &Path) -> Value {
    json(&run(db, &["--format", "json", "store", "info", "--digest"]))["table_digests"].clone()
}

#[test]
fn a_dashboard_a_tab_and_a_saved_table_from_the_cli_one_row_per_build_with_the_mirror() {
    let (dir, w) = world();
    let root = w.join("testgrid");
    let server = testgrid_server(root.clone());
    let tabs = tabs_of(&root.join(DASHBOARD));
    let db = dir.path().join("tg.db");

    // One tab, as its page's URL is copied from the browser.
    let one = json(&run(
        &db,
        &["--format", "json", "fetch", "--testgrid", &format!("{}/{DASHBOARD}#{}&width=20", server.base, tabs[0])],
    ));
    let t = &one["testgrid"]["tabs"];
    assert_eq!(t.as_array().unwrap().len(), 1);
    assert_eq!(t[0]["tab"], tabs[0].as_str());
    assert_eq!(t[0]["dashboard"], DASHBOARD);
    let columns = t[0]["columns"].as_u64().unwrap();
    let cells: u64 = t[0]["cells"].as_object().unwrap().values().map(|n| n.as_u64().unwrap()).sum();
    assert_eq!(cells, columns * t[0]["rows"].as_u64().unwrap(), "every cell counted once");
    assert_eq!(t[0]["builds_written"].as_u64(), Some(columns));
    assert_eq!(rows(&db, "builds"), columns);

    // The whole dashboard: every tab of its summary; the tab read before is unchanged.
    let all = run(&db, &["fetch", "--testgrid", &format!("{}/{DASHBOARD}", server.base)]);
    assert!(all.status.success(), "{}", stderr(&all));
    let text = String::from_utf8_lossy(&all.stdout);
    assert!(text.contains(&format!("{} tab(s) stored", tabs.len())), "{text}");
    assert!(
        text.contains(&format!("{DASHBOARD}/{} (job ", tabs[0])) && text.contains(" 0 build(s) written,"),
        "{text}"
    );
    assert_eq!(rows(&db, "testgrid_tabs") as usize, tabs.len());
    let tg_builds = rows(&db, "builds");

    // The same world's bucket read after: TestGrid's builds are the bucket's, merged
    // into their rows, never a second row.
    let mirror_only = dir.path().join("mirror.db");
    let m = w.join("gcs").join("kubernetes-ci-logs");
    let o = run(&mirror_only, &["fetch", "--all", "--mirror", m.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&db, &["fetch", "--all", "--mirror", m.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(tg_builds > 0 && tg_builds <= rows(&mirror_only, "builds"));
    assert_eq!(rows(&db, "builds"), rows(&mirror_only, "builds"), "one row per build whichever source came first");

    // Offline: a saved answer, stored as the tab it is named.
    let saved = dir.path().join("saved.db");
    let file = root.join(DASHBOARD).join("table").join(&tabs[0]);
    let s = json(&run(
        &saved,
        &["--format", "json", "fetch", "--testgrid-file", file.to_str().unwrap(), "--testgrid-tab", "offline"],
    ));
    assert_eq!(s["testgrid"]["tabs"][0]["dashboard"], "saved");
    assert_eq!(s["testgrid"]["tabs"][0]["tab"], "offline");
    assert_eq!(s["testgrid"]["tabs"][0]["columns"].as_u64(), Some(columns));
}

/// A dashboard with hostile tabs beside a good one: the good one is stored, each bad
/// one named with what was wrong, exit 2; nothing of the bad tabs is stored.
#[test]
fn hostile_tabs_and_names_exit_2_naming_them_and_lose_nothing() {
    let (dir, w) = world();
    let good_dir = w.join("testgrid").join(DASHBOARD);
    let good_tab = tabs_of(&good_dir)[0].clone();
    let good = std::fs::read(good_dir.join("table").join(&good_tab)).unwrap();
    let mut doc: Value = serde_json::from_slice(&good).unwrap();
    let root = dir.path().join("hostile");
    let d = root.join("bad");
    std::fs::create_dir_all(d.join("table")).unwrap();
    let mut summary = serde_json::Map::new();
    let mut put = |name: &str, body: Vec<u8>| {
        if !name.contains('/') {
            std::fs::write(d.join("table").join(name), body).unwrap();
        }
        summary.insert(name.to_string(), serde_json::json!({"overall_status": "FAILING"}));
    };
    put(&good_tab, good.clone());
    put("not-json", b"{\"changelists\": [\"1\", ".to_vec());
    // A row claiming a billion runs: refused before it is expanded.
    doc["tests"][0]["statuses"][0]["count"] = serde_json::json!(1_000_000_000u64);
    put("huge-row", serde_json::to_vec(&doc).unwrap());
    put("../../etc/passwd", Vec::new());
    std::fs::write(d.join("summary"), serde_json::to_vec(&summary).unwrap()).unwrap();
    let server = testgrid_server(root);

    let db = dir.path().join("s.db");
    let o = run(&db, &["fetch", "--testgrid", &format!("{}/bad", server.base)]);
    let (out, err) = (String::from_utf8_lossy(&o.stdout).into_owned(), stderr(&o));
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(out.contains("1 tab(s) stored") && out.contains("3 tab(s) not stored:"), "{out}");
    assert!(out.contains("bad/not-json: TestGrid tab \"not-json\""), "{out}");
    assert!(out.contains("bad/huge-row: TestGrid tab \"huge-row\"") && out.contains("more than"), "{out}");
    assert!(out.contains("bad/../../etc/passwd: ") && out.contains("404"), "{out}");
    assert!(err.contains("3 TestGrid tab(s) not stored; first: bad/"), "{err}");
    assert_eq!(rows(&db, "testgrid_tabs"), 1, "only the good tab");
    let before = digests(&db);

    // Names with path tricks are refused before any request or store write.
    let hits = server.hits.load(std::sync::atomic::Ordering::SeqCst);
    for url in [format!("{}/bad/../{DASHBOARD}", server.base), format!("{}/%2E%2E", server.base)] {
        let o = run(&db, &["fetch", "--testgrid", &url]);
        assert_eq!(o.status.code(), Some(2), "{url}: {}", stderr(&o));
        assert!(stderr(&o).contains(&url) && stderr(&o).contains("`..` path segment"), "{}", stderr(&o));
    }
    assert_eq!(server.hits.load(std::sync::atomic::Ordering::SeqCst), hits, "no request made");
    let good_file = good_dir.join("table").join(&good_tab);
    let o = run(
        &db,
        &[
            "fetch",
            "--testgrid-file",
            good_file.to_str().unwrap(),
            "--testgrid-dashboard",
            "../../tmp",
            "--testgrid-tab",
            "x",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("dashboard name \"../../tmp\" refused"), "{}", stderr(&o));

    // Saved answers: not JSON, an HTML page, a huge row, no such file: each exit 2
    // naming the file and what was wrong.
    let bad_json = dir.path().join("broken.json");
    std::fs::write(&bad_json, b"{\"changelists\": [\"1\",").unwrap();
    let html = dir.path().join("page.json");
    std::fs::write(&html, b"<!DOCTYPE html><html><head><title>Sign in</title></head></html>").unwrap();
    let huge = dir.path().join("huge.table.json");
    std::fs::write(&huge, serde_json::to_vec(&doc).unwrap()).unwrap();
    let cases = [
        (bad_json.display().to_string(), "TestGrid tab \"broken\""),
        (html.display().to_string(), "an HTML page (titled \"Sign in\")"),
        (huge.display().to_string(), "more than"),
        (dir.path().join("absent.json").display().to_string(), "no such file"),
    ];
    for (file, want) in &cases {
        let o = run(&db, &["fetch", "--testgrid-file", file]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{file}: {err}");
        assert!(err.contains(file.as_str()) && err.contains(want), "{file}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    assert_eq!(digests(&db), before, "nothing stored or lost by the refused inputs");
}

/// `watch --once` with a `testgrid` source: the dashboard's tabs stored, the source's
/// status recorded like any other source's; a refused tab fails the source by name.
#[test]
fn watch_reads_testgrid_sources_and_records_their_status() {
    let (dir, w) = world();
    let server = testgrid_server(w.join("testgrid"));
    let tabs = tabs_of(&w.join("testgrid").join(DASHBOARD));
    let cfg = dir.path().join("citriage.toml");
    std::fs::write(
        &cfg,
        format!(
            "[schedule]\ninterval = \"1h\"\n\n[retention]\nwindow_days = 3650\nlog_days = 3650\n\n\
             [[sources.testgrid]]\nname = \"blocking\"\nurl = \"{}/{DASHBOARD}\"\n\n\
             [[sources.testgrid]]\nname = \"missing\"\nurl = \"{}/no-such-dashboard\"\n",
            server.base, server.base
        ),
    )
    .unwrap();
    let o = run(dir.path().join("unused.db").as_path(), &["config", "check", cfg.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("2 TestGrid source(s)"), "{}", stderr(&o));
    let db = dir.path().join("w.db");
    let o = run(&db, &["--format", "json", "watch", "--once", "--config", cfg.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains("\"kind\": \"testgrid\""), "{out}\n{}", stderr(&o));
    assert_eq!(rows(&db, "testgrid_tabs") as usize, tabs.len());
    let sources = rows(&db, "ingest_sources");
    assert_eq!(sources, 2, "both sources' attempts recorded");
    assert!(out.contains("\"outcome\": \"fetched\"") && out.contains("\"outcome\": \"failed\""), "{out}");
    assert!(out.contains("404"), "the missing dashboard's error is kept: {out}");
}

/// The real TestGrid table (82 runs × 965 tests) read offline from the CLI: every cell
/// accounted for, the counts per status equal to the answer's own run lengths.
#[test]
fn the_real_testgrid_table_from_the_cli() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/real/testgrid-2020");
    let file = root.join("e2e-gcp-rt-4.4.table.json");
    if !file.is_file() {
        println!("skipped: {} is absent (the shared real data)", file.display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("real.db");
    let v = json(&run(
        &db,
        &[
            "--format",
            "json",
            "fetch",
            "--testgrid-file",
            file.to_str().unwrap(),
            "--testgrid-dashboard",
            "redhat-openshift-ocp-release-4.4-informing",
            "--testgrid-tab",
            "release-openshift-ocp-installer-e2e-gcp-rt-4.4",
        ],
    ));
    let t = &v["testgrid"]["tabs"][0];
    assert_eq!((t["columns"].as_u64(), t["rows"].as_u64()), (Some(82), Some(965)));
    // Independently of the reader: the runs' lengths summed by status value.
    let plain: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let mut by_value = std::collections::BTreeMap::<u64, u64>::new();
    for row in plain["tests"].as_array().unwrap() {
        for run in row["statuses"].as_array().unwrap() {
            *by_value.entry(run["value"].as_u64().unwrap()).or_default() += run["count"].as_u64().unwrap();
        }
    }
    let names = [(0, "NO_RESULT"), (1, "PASS"), (12, "FAIL")];
    for (value, n) in &by_value {
        let name = names.iter().find(|(v, _)| v == value).map(|(_, n)| *n).unwrap_or("?");
        println!("  {name:<10} {n:>6}");
        assert_eq!(t["cells"][name].as_u64(), Some(*n), "status {value} ({name})");
    }
    assert_eq!(by_value.values().sum::<u64>(), 82 * 965);
    assert_eq!(rows(&db, "builds"), 82);
}
