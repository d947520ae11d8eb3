//! TestGrid's view of the world: for each job TestGrid shows (the dashboards and tab
//! of [`crate::prow::testgrid_of`]), the table TestGrid's GCS updater would build from
//! the job's builds, written as TestGrid's `/<dashboard>/table?tab=<tab>` answer, and
//! each dashboard's `/<dashboard>/summary`.
//!
//! The updater's rules are followed from TestGrid's code: every `junit*.xml` under
//! `artifacts/` is read; a case is named by its `name` alone; a case skipped with the
//! message `skipped` gives no cell, a failure or error a FAIL whose message is the
//! failure's message and body cut to 140 bytes (70 from each end around `...`); the
//! cells of one name in one build are merged (a pass and a failure make FLAKY, the
//! message `n/N runs passed: <message>`); the `Overall` row is PASS or FAIL from
//! `finished.json`'s `passed` (an ABORTED build is FAIL too), FAIL with
//! `Malformed artifacts: …` when a JUnit file cannot be parsed (its cases are then not
//! read), RUNNING while the build runs; the `Commit` column is the build's version,
//! 9 characters of it. Builds in state=error have no GCS folder and no column. The
//! pod-info row of TestGrid's prowjob analysis is not written.

use crate::junit::{JunitFile, Outcome, Root, Suite};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// TestGrid's status numbers used here.
const PASS: u8 = 1;
const RUNNING: u8 = 4;
const FAIL: u8 = 12;
const FLAKY: u8 = 13;

/// One cell: a status, its message and short text.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Cell {
    status: u8,
    message: String,
    icon: String,
}

/// One column: a build as TestGrid shows it.
#[derive(Clone, Debug)]
pub struct Column {
    pub build: String,
    pub started: i64,
    pub commit: String,
    cells: BTreeMap<String, Cell>,
}

/// The message TestGrid keeps of a result: its parts joined by a newline, cut to 140
/// bytes (the first and last 70 around `...`; a cut inside a character is made valid).
fn message_of(parts: &[&str]) -> String {
    let msg = parts.iter().filter(|p| !p.is_empty()).copied().collect::<Vec<_>>().join("\n");
    const MAX: usize = 140;
    if msg.len() < MAX {
        return msg;
    }
    let h = MAX / 2;
    let b = msg.as_bytes();
    let mut out = Vec::with_capacity(MAX + 3);
    out.extend_from_slice(&b[..h]);
    out.extend_from_slice(b"...");
    out.extend_from_slice(&b[b.len() - h..]);
    match String::from_utf8(out) {
        Ok(s) => s,
        Err(e) => format!("invalid utf8: {}", String::from_utf8_lossy(e.as_bytes()).replace('\u{FFFD}', "?")),
    }
}

fn cases<'a>(s: &'a Suite, out: &mut Vec<&'a crate::junit::Case>) {
    out.extend(s.cases.iter());
    for n in &s.nested {
        cases(n, out);
    }
}

/// Merges the cells of one name (TestGrid's `MergeCells` with flaky merging).
fn merge(cells: Vec<Cell>) -> Cell {
    if cells.len() == 1 {
        return cells.into_iter().next().unwrap_or(Cell { status: PASS, message: String::new(), icon: String::new() });
    }
    let pass = cells.iter().filter(|c| c.status == PASS).count();
    let fail = cells.iter().filter(|c| c.status == FAIL).count();
    let fail_msg = cells.iter().rev().find(|c| c.status == FAIL && !c.message.is_empty()).map(|c| c.message.clone());
    let status = if pass > 0 && fail > 0 {
        FLAKY
    } else if fail > 0 {
        FAIL
    } else {
        PASS
    };
    let icon = format!("{pass}/{}", cells.len());
    let message = match fail_msg {
        Some(m) => format!("{icon} runs passed: {m}"),
        None => format!("{icon} runs passed"),
    };
    Cell { status, message, icon }
}

/// The column of a finished build: its JUnit files as TestGrid reads them, and its
/// `passed`. `truncated` names the files TestGrid cannot parse.
pub fn finished_column(build: &str, started: i64, version: &str, files: &[JunitFile], passed: bool) -> Column {
    let mut named: BTreeMap<String, Vec<Cell>> = BTreeMap::new();
    let mut malformed = Vec::new();
    for f in files {
        let name = f.rel.rsplit('/').next().unwrap_or(&f.rel);
        if !f.rel.starts_with("artifacts/") || !name.starts_with("junit") || !name.ends_with(".xml") {
            continue;
        }
        if f.truncate_permille.is_some() {
            malformed.push(f.rel.clone());
            continue;
        }
        let mut all = Vec::new();
        match &f.root {
            Root::Suite(s) => cases(s, &mut all),
            Root::Suites(ss) => ss.iter().for_each(|s| cases(s, &mut all)),
        }
        for c in all {
            let cell = match &c.outcome {
                Outcome::Pass => Cell { status: PASS, message: String::new(), icon: String::new() },
                // Skipped with the message "skipped": no cell.
                Outcome::Skipped => continue,
                Outcome::Fail { message, body, .. } => {
                    let m = message_of(&[message, body]);
                    let icon = if m.is_empty() { String::new() } else { "F".into() };
                    Cell { status: FAIL, message: m, icon }
                }
                Outcome::Error { message } => {
                    let m = message_of(&[message]);
                    let icon = if m.is_empty() { String::new() } else { "F".into() };
                    Cell { status: FAIL, message: m, icon }
                }
            };
            named.entry(c.name.clone().unwrap_or_default()).or_default().push(cell);
        }
    }
    let mut cells: BTreeMap<String, Cell> = named.into_iter().map(|(n, c)| (n, merge(c))).collect();
    let overall = if !malformed.is_empty() {
        Cell { status: FAIL, message: format!("Malformed artifacts: {}", malformed.join(", ")), icon: "E".into() }
    } else if passed {
        Cell { status: PASS, message: String::new(), icon: String::new() }
    } else if cells.values().any(|c| c.status == FAIL) {
        Cell { status: FAIL, message: String::new(), icon: String::new() }
    } else {
        Cell { status: FAIL, message: "Build failed outside of test results".into(), icon: "F".into() }
    };
    cells.insert("Overall".into(), overall);
    Column { build: build.to_string(), started, commit: commit_of(version), cells }
}

/// The column of a build still running.
pub fn running_column(build: &str, started: i64, version: &str) -> Column {
    let mut cells = BTreeMap::new();
    cells.insert(
        "Overall".to_string(),
        Cell { status: RUNNING, message: "Build still running...".into(), icon: "R".into() },
    );
    Column { build: build.to_string(), started, commit: commit_of(version), cells }
}

/// The version as TestGrid's `Commit` column shows it: after a `+`, 9 characters.
fn commit_of(version: &str) -> String {
    let v = version.rsplit('+').next().unwrap_or(version);
    v.chars().take(9).collect()
}

/// Run-length encodes a row's statuses as TestGrid writes them.
fn runs(cells: &[u8]) -> Vec<Value> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < cells.len() {
        let n = cells[i..].iter().take_while(|c| **c == cells[i]).count();
        out.push(json!({"count": n, "value": cells[i]}));
        i += n;
    }
    out
}

/// A tab's table answer, columns newest first as TestGrid lists them; `query` is
/// `bucket/logs/<job>` or `bucket/pr-logs/directory/<job>`.
pub fn table_json(query: &str, group: &str, columns: &[Column]) -> Vec<u8> {
    let mut cols: Vec<&Column> = columns.iter().collect();
    cols.sort_by(|a, b| b.started.cmp(&a.started).then_with(|| b.build.cmp(&a.build)));
    let mut names: Vec<&String> = cols.iter().flat_map(|c| c.cells.keys()).collect();
    names.sort();
    names.dedup();
    // The Overall row first, as TestGrid shows it.
    names.sort_by_key(|n| *n != "Overall");
    let mut tests = Vec::new();
    for name in &names {
        let statuses: Vec<u8> = cols.iter().map(|c| c.cells.get(*name).map_or(0, |x| x.status)).collect();
        let filled: Vec<&Cell> = cols.iter().filter_map(|c| c.cells.get(*name)).collect();
        tests.push(json!({
            "name": name,
            "original-name": name,
            "alert": Value::Null,
            "linked_bugs": [],
            "messages": filled.iter().map(|c| c.message.as_str()).collect::<Vec<_>>(),
            "short_texts": filled.iter().map(|c| c.icon.as_str()).collect::<Vec<_>>(),
            "statuses": runs(&statuses),
            "target": name,
        }));
    }
    let latest_green = cols
        .iter()
        .find(|c| c.cells.get("Overall").is_some_and(|o| o.status == PASS))
        .map(|c| c.build.clone())
        .unwrap_or_default();
    let doc = json!({
        "test-group-name": group,
        "query": query,
        "status": "",
        "cached": false,
        "summary": "",
        "bugs": {},
        "changelists": cols.iter().map(|c| c.build.as_str()).collect::<Vec<_>>(),
        "column_ids": cols.iter().map(|c| format!("\u{e000}{}", c.build)).collect::<Vec<_>>(),
        "custom-columns": [cols.iter().map(|c| c.commit.as_str()).collect::<Vec<_>>()],
        "column-header-names": ["Date", "Time", "Build", "Commit"],
        "groups": cols.iter().map(|_| "").collect::<Vec<_>>(),
        "metrics": ["test-duration-minutes"],
        "tests": tests,
        "row_ids": names,
        "timestamps": cols.iter().map(|c| c.started * 1000).collect::<Vec<_>>(),
        "clusters": [],
        "test_id_map": Value::Null,
        "test-metadata": {},
        "stale-test-threshold": 10,
        "num-stale-tests": 0,
        "add-tabular-names-option": false,
        "show-tabular-names": false,
        "description": "",
        "bug-component": 0,
        "code-search-path": "github.com/kubernetes/kubernetes/search",
        "open-test-template": {"url": "https://prow.k8s.io/view/gs/<gcs_prefix>/<changelist>", "options": {}},
        "file-bug-template": {"url": "https://github.com/kubernetes/kubernetes/issues/new", "options": {"title": "E2E: <test-name>", "body": "<test-url>"}},
        "attach-bug-template": {"url": "", "options": {}},
        "results-url-template": {"url": "https://prow.k8s.io/job-history/<gcs_prefix>", "options": {}},
        "code-search-url-template": {"url": "https://github.com/kubernetes/kubernetes/compare/<start-custom-0>...<end-custom-0>", "options": {}},
        "about-dashboard-url": "",
        "open-bug-template": {"url": "https://github.com/kubernetes/kubernetes/issues/", "options": {}},
        "results-text": "See these results on Prow",
        "latest-green": latest_green,
        "triage-enabled": false,
        "notifications": Value::Null,
        "overall-status": 0,
    });
    let mut out = serde_json::to_vec(&doc).unwrap_or_default();
    out.push(b'\n');
    out
}

/// One tab's entry of its dashboard's summary.
pub fn summary_entry(columns: &[Column]) -> Value {
    let mut cols: Vec<&Column> = columns.iter().collect();
    cols.sort_by(|a, b| b.started.cmp(&a.started).then_with(|| b.build.cmp(&a.build)));
    let status = |c: &Column| c.cells.get("Overall").map_or(0, |o| o.status);
    let finished: Vec<&&Column> = cols.iter().filter(|c| status(c) != RUNNING).collect();
    let recent: Vec<&&&Column> = finished.iter().take(10).collect();
    let passed = recent.iter().filter(|c| status(c) == PASS).count();
    let overall = match finished.first() {
        None => "PENDING",
        Some(c) if status(c) == PASS && passed == recent.len() => "PASSING",
        Some(c) if status(c) == PASS => "FLAKY",
        Some(_) => "FAILING",
    };
    json!({
        "alert": "",
        "last_run_timestamp": cols.first().map_or(0, |c| c.started * 1000),
        "last_update_timestamp": cols.first().map_or(0, |c| c.started),
        "latest_green": finished.iter().find(|c| status(c) == PASS).map(|c| c.build.clone()).unwrap_or_default(),
        "overall_status": overall,
        "overall_status_icon": "",
        "status": format!("{passed} of {} recent columns passed", recent.len()),
        "tests": [],
        "dashboard_name": "",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::junit::{Case, Style};

    fn file(rel: &str, cases: Vec<(&str, Outcome)>) -> JunitFile {
        JunitFile {
            rel: rel.into(),
            style: Style::GoJunit,
            root: Root::Suite(Suite {
                name: Some("s".into()),
                cases: cases
                    .into_iter()
                    .map(|(n, o)| Case {
                        classname: "c".into(),
                        name: Some(n.into()),
                        time_ms: 1,
                        outcome: o,
                        lifecycle: None,
                    })
                    .collect(),
                ..Suite::default()
            }),
            truncate_permille: None,
        }
    }

    fn fail(m: &str) -> Outcome {
        Outcome::Fail { message: m.into(), body: String::new(), cause: 0 }
    }

    #[test]
    fn cells_follow_testgrids_updater() {
        let f = file(
            "artifacts/junit_01.xml",
            vec![
                ("a", Outcome::Pass),
                ("b", fail("boom")),
                ("b", Outcome::Pass),
                ("c", fail("x")),
                ("c", fail("y")),
                ("s", Outcome::Skipped),
            ],
        );
        let col = finished_column("7", 100, "v1.2+abcdef0123", std::slice::from_ref(&f), false);
        assert_eq!(col.commit, "abcdef012");
        assert_eq!(col.cells["a"].status, PASS);
        assert_eq!((col.cells["b"].status, col.cells["b"].message.as_str()), (FLAKY, "1/2 runs passed: boom"));
        assert_eq!(col.cells["c"].status, FAIL);
        assert!(!col.cells.contains_key("s"), "skipped with the message `skipped`: no cell");
        assert_eq!(col.cells["Overall"].status, FAIL);
        let mut broken = f.clone();
        broken.truncate_permille = Some(500);
        let col =
            finished_column("8", 100, "v", &[broken, file("artifacts/junit_02.xml", vec![("d", Outcome::Pass)])], true);
        assert_eq!(col.cells["Overall"].message, "Malformed artifacts: artifacts/junit_01.xml");
        assert!(col.cells.contains_key("d") && !col.cells.contains_key("a"));
        let ok = finished_column("9", 100, "v", &[file("artifacts/junit_02.xml", vec![("d", Outcome::Pass)])], false);
        assert_eq!(ok.cells["Overall"].message, "Build failed outside of test results");
        assert!(
            finished_column("9", 1, "v", &[file("artifacts/other.xml", vec![("d", Outcome::Pass)])], true).cells.len()
                == 1
        );
    }

    #[test]
    fn messages_are_cut_as_testgrid_cuts_them() {
        assert_eq!(message_of(&["a", "", "b"]), "a\nb");
        let long = "x".repeat(100) + &"y".repeat(100);
        let m = message_of(&[&long]);
        assert_eq!(m, format!("{}...{}", "x".repeat(70), "y".repeat(70)));
    }

    #[test]
    fn tables_run_length_encode_and_list_messages_of_filled_cells() {
        let cols = vec![
            finished_column("1", 10, "v", &[file("artifacts/junit.xml", vec![("t", fail("m1"))])], false),
            running_column("3", 30, "v"),
            finished_column("2", 20, "v", &[file("artifacts/junit.xml", vec![("t", Outcome::Pass)])], true),
        ];
        let v: Value = serde_json::from_slice(&table_json("b/logs/j", "j", &cols)).unwrap();
        assert_eq!(v["changelists"], json!(["3", "2", "1"]));
        assert_eq!(v["tests"][0]["name"], "Overall");
        assert_eq!(
            v["tests"][0]["statuses"],
            json!([{"count": 1, "value": 4}, {"count": 1, "value": 1}, {"count": 1, "value": 12}])
        );
        assert_eq!(
            v["tests"][1]["statuses"],
            json!([{"count": 1, "value": 0}, {"count": 1, "value": 1}, {"count": 1, "value": 12}])
        );
        assert_eq!(v["tests"][1]["messages"], json!(["", "m1"]));
        assert_eq!(v["latest-green"], "2");
        assert_eq!(summary_entry(&cols)["overall_status"], "FLAKY");
    }
}
