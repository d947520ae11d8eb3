//! TestGrid as a source, against a TestGrid-shaped server on 127.0.0.1 laid out like
//! the real one (`/<dashboard>/summary`, `/<dashboard>/table?tab=<tab>`) serving the
//! tables a synthetic world wrote: every tab of a dashboard stored whole, the same
//! figures as the world's GCS mirror for the builds both show (where TestGrid shows a
//! build differently, as its updater does, exactly those builds differ), one row per
//! build whichever source is read first, and bad tabs refused by name while the rest of
//! the dashboard is read and nothing of them is stored.

mod common;

use citriage_analysis::metrics::corrected::{job_figures, JobFigures, Settings};
use citriage_ingest::testgrid::{ingest_dashboard, TestgridOptions, DISAGREEMENT};
use citriage_ingest::{discover_jobs, ingest_jobs, IngestOptions};
use citriage_model::build::BuildRecord;
use citriage_sources::artifacts::LocalMirror;
use citriage_sources::testgrid::TestgridHttp;
use citriage_sources::HttpOptions;
use citriage_store::Store;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const BUCKET: &str = "kubernetes-ci-logs";

fn world() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w");
    let mut p = citriage_synth::SynthParams::preset("tiny").unwrap();
    p.payloads = 0;
    citriage_synth::generate(&p, &w, &mut |_| {}).unwrap();
    (dir, w)
}

/// A TestGrid on 127.0.0.1 answering from the world's `testgrid/` folder.
fn testgrid_server(root: PathBuf) -> common::Server {
    common::serve(move |url| {
        let (path, query) = url.split_once('?').unwrap_or((url, ""));
        let parts: Vec<String> = path.trim_start_matches('/').split('/').map(common::pct_decode).collect();
        let file = match parts.as_slice() {
            [d, s] if s == "summary" => Some(root.join(d).join("summary")),
            [d, t] if t == "table" => query
                .split('&')
                .find_map(|kv| kv.strip_prefix("tab="))
                .map(|tab| root.join(d).join("table").join(common::pct_decode(tab))),
            _ => None,
        };
        match file.and_then(|f| std::fs::read(f).ok()) {
            Some(body) => common::respond(200, body),
            None => common::respond(404, b"<html><title>Not found</title></html>".to_vec()),
        }
    })
}

fn dashboards(w: &Path) -> Vec<String> {
    let mut d: Vec<String> = std::fs::read_dir(w.join("testgrid"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into())
        .collect();
    d.sort();
    d
}

fn read_testgrid(st: &mut Store, tg: &TestgridHttp, w: &Path) -> usize {
    let mut written = 0;
    for d in dashboards(w) {
        let s = ingest_dashboard(st, tg, &d, None, &TestgridOptions::default(), &|_| {}).unwrap();
        assert!(s.failures.is_empty(), "{d}: {:?}", s.failures);
        written += s.builds_written();
    }
    written
}

fn read_mirror(st: &mut Store, w: &Path) {
    let src = LocalMirror::new(w.join("gcs").join(BUCKET), BUCKET);
    let jobs = discover_jobs(&src).unwrap();
    let s = ingest_jobs(&src, st, &jobs, &IngestOptions { log_excerpts: None, ..IngestOptions::default() }, &|_| {})
        .unwrap();
    assert!(s.failures.is_empty(), "{:?}", s.failures);
}

fn all_builds(st: &mut Store) -> Vec<BuildRecord> {
    let mut out = Vec::new();
    for j in st.build_jobs().unwrap() {
        out.extend(st.job_builds_with_tests(&j, None).unwrap());
    }
    out
}

#[test]
fn every_tab_of_every_dashboard_is_stored_whole() {
    let (_keep, w) = world();
    let server = testgrid_server(w.join("testgrid"));
    let tg = TestgridHttp::new(&server.base, HttpOptions::default()).unwrap();
    let mut st = Store::open_in_memory().unwrap();
    let d = "sig-release-master-blocking";
    let s = ingest_dashboard(&mut st, &tg, d, None, &TestgridOptions::default(), &|_| {}).unwrap();
    assert!(s.failures.is_empty(), "{:?}", s.failures);
    let summary: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&std::fs::read(w.join("testgrid").join(d).join("summary")).unwrap()).unwrap();
    assert_eq!(s.tabs.len(), summary.len(), "every tab of the summary is read");
    for t in &s.tabs {
        // Every cell accounted for: the counts per status add up to columns × rows.
        assert_eq!(t.cells.values().sum::<u64>(), (t.columns * t.rows) as u64, "{}", t.tab);
        assert_eq!(t.cells.len(), 16, "every status of the enum is listed");
        assert_eq!(t.builds_written, t.columns, "{}", t.tab);
    }
    let stored = st.testgrid_tabs().unwrap();
    assert_eq!(stored.len(), s.tabs.len());
    assert!(stored.iter().all(|t| t.bucket == BUCKET && t.meta.contains("open-test-template")));
    let builds = all_builds(&mut st);
    assert_eq!(builds.len(), s.tabs.iter().map(|t| t.columns).sum::<usize>());
    assert!(builds.iter().all(|b| b.origin == "testgrid" && b.finished.is_none()));
    let failed_with_text =
        builds.iter().flat_map(|b| &b.tests).filter(|t| t.status == "failed" && t.failure_text.is_some()).count();
    assert!(failed_with_text > 0, "TestGrid's messages are the failure texts");
    // Read again: the finished builds are already stored as TestGrid shows them.
    let digest = st.content_digest().unwrap();
    let again = ingest_dashboard(&mut st, &tg, d, None, &TestgridOptions::default(), &|_| {}).unwrap();
    let running: usize = builds.iter().filter(|b| !b.complete).count();
    assert_eq!(again.builds_written(), running, "only builds still running are written again");
    if running == 0 {
        assert_eq!(st.content_digest().unwrap(), digest);
    }
}

/// Passes, failures (aborted included), pending, pass rate (millionths), streak,
/// latest result, and each failing test's runs and failed runs.
type Compared = (u64, u64, u64, Option<u64>, u64, Option<String>, Vec<(String, u64, u64)>);

/// The figures both stores can be compared on, per job.
fn comparable(f: &JobFigures) -> Compared {
    let mut tests: Vec<(String, u64, u64)> = f.tests.iter().map(|t| (t.name.clone(), t.runs, t.failed_runs)).collect();
    tests.sort();
    (
        f.passes,
        f.failures + f.aborted,
        f.pending,
        f.pass_rate.map(|r| (r * 1e6).round() as u64),
        f.streak_builds,
        f.latest_result.clone(),
        tests,
    )
}

#[test]
fn testgrid_and_the_mirror_give_the_same_figures_for_the_builds_both_show_alike() {
    let (_keep, w) = world();
    let server = testgrid_server(w.join("testgrid"));
    let tg = TestgridHttp::new(&server.base, HttpOptions::default()).unwrap();
    let mut from_tg = Store::open_in_memory().unwrap();
    read_testgrid(&mut from_tg, &tg, &w);
    let mut from_gcs = Store::open_in_memory().unwrap();
    read_mirror(&mut from_gcs, &w);
    let tg_builds = all_builds(&mut from_tg);
    let gcs_builds = all_builds(&mut from_gcs);

    // Builds TestGrid shows differently from their artifacts, as its updater does: an
    // ABORTED build is FAIL, a truncated JUnit upload fails the build and hides its
    // cases. The jobs without such builds must agree on every compared figure.
    let odd_jobs: BTreeSet<String> = gcs_builds
        .iter()
        .filter(|b| b.result.as_deref() == Some("ABORTED") || b.problems.iter().any(|p| p.contains("junit")))
        .map(BuildRecord::dashboard_job)
        .collect();
    let as_of = citriage_model::Day::parse("2026-11-21").unwrap().end_seconds();
    let settings = Settings::new(as_of, vec!["Up".into(), "Down".into(), "Test".into()]);
    // TestGrid names tests without their JUnit classname.
    let unclassed: Vec<BuildRecord> = gcs_builds
        .iter()
        .filter(|b| b.origin == "gcs")
        .cloned()
        .map(|mut b| {
            for t in &mut b.tests {
                t.classname.clear();
            }
            b
        })
        .collect();
    let a: BTreeMap<String, JobFigures> =
        job_figures(&tg_builds, &settings).into_iter().map(|f| (f.job.clone(), f)).collect();
    let b: BTreeMap<String, JobFigures> =
        job_figures(&unclassed, &settings).into_iter().map(|f| (f.job.clone(), f)).collect();
    let both: Vec<&String> = a.keys().filter(|j| b.contains_key(*j)).collect();
    assert!(both.len() >= 15, "{} jobs in both", both.len());
    let (mut same, mut differ, mut by_signature) = (0, 0, 0);
    let ids = |f: &JobFigures| -> BTreeMap<String, String> {
        f.mass_failures
            .iter()
            .map(|m| (m.build.rsplit('/').next().unwrap_or_default().to_string(), m.reason.clone()))
            .collect()
    };
    for job in both {
        let (x, y) = (&a[job], &b[job]);
        // Environment events told by an infra signature in the full failure text,
        // which TestGrid's 140-character messages may not carry: said by the flag.
        let (ex, ey) = (ids(x), ids(y));
        let env = |f: &JobFigures| f.tests.iter().map(|t| t.environment_failures).sum::<u64>();
        if (ex != ey || env(x) != env(y)) && !odd_jobs.contains(job) {
            by_signature += 1;
            for (id, reason) in ey.iter().filter(|(id, _)| !ex.contains_key(*id)) {
                assert!(reason.contains("infra signature"), "{job} {id}: {reason}");
            }
            assert!(ex.keys().all(|id| ey.contains_key(id)), "{job}: {ex:?} {ey:?}");
            assert!(env(x) <= env(y), "{job}: TestGrid sees fewer environment failures, never more");
            // The same failures, told apart differently: per test, the builds it failed in.
            let failed = |f: &JobFigures| -> BTreeMap<String, u64> {
                f.tests.iter().map(|t| (t.name.clone(), t.failed_runs + t.environment_failures)).collect()
            };
            if ex == ey {
                assert_eq!(failed(x), failed(y), "{job}");
            }
            assert!(x.flags.iter().any(|f| f.kind == "testgrid-only" && f.detail.contains("environment signatures")));
            continue;
        }
        if odd_jobs.contains(job) {
            differ += 1;
            // Still the same builds, counted alike but for the ones TestGrid fails.
            assert_eq!(
                x.passes + x.failures + x.aborted + x.pending,
                y.passes + y.failures + y.aborted + y.pending,
                "{job}"
            );
            assert!(x.passes <= y.passes, "{job}");
            continue;
        }
        same += 1;
        assert_eq!(comparable(x), comparable(y), "{job}: TestGrid and the mirror disagree");
        // What TestGrid cannot show is said, not counted as nothing: a presubmit's PR head.
        let in_window = x.passes + x.failures + x.aborted + x.errors + x.pending;
        let flag = x.flags.iter().find(|f| f.kind == "testgrid-only");
        assert_eq!(flag.is_some(), in_window > 0, "{job}: the TestGrid flag");
        if job.starts_with("pr:") {
            assert_eq!(x.corrected_consistency, None, "{job}");
            assert!(flag.is_none_or(|f| f.detail.contains("PR head")), "{flag:?}");
        } else {
            assert_eq!(x.corrected_consistency, y.corrected_consistency, "{job}");
        }
    }
    println!(
        "{same} jobs with the same figures; {differ} with builds TestGrid shows as failing; \
         {by_signature} with environment events only the full failure texts show"
    );
    assert!(same >= 10, "{same} jobs compared in full");
}

#[test]
fn one_row_per_build_whichever_source_comes_first() {
    let (_keep, w) = world();
    let server = testgrid_server(w.join("testgrid"));
    let tg = TestgridHttp::new(&server.base, HttpOptions::default()).unwrap();
    let mut gcs_first = Store::open_in_memory().unwrap();
    read_mirror(&mut gcs_first, &w);
    let gcs_rows = gcs_first.build_counts().unwrap().0;
    read_testgrid(&mut gcs_first, &tg, &w);
    let mut tg_first = Store::open_in_memory().unwrap();
    read_testgrid(&mut tg_first, &tg, &w);
    read_mirror(&mut tg_first, &w);
    assert_eq!(gcs_first.build_counts().unwrap().0, gcs_rows, "TestGrid adds no row for a build GCS has");
    assert_eq!(tg_first.build_counts().unwrap().0, gcs_rows, "GCS replaces TestGrid's rows of its builds");
    assert_eq!(gcs_first.content_digest().unwrap(), tg_first.content_digest().unwrap(), "the order does not matter");
    let index = gcs_first.build_index().unwrap();
    let with_facts: Vec<_> = index
        .iter()
        .filter(|b| b.record.origin == "gcs")
        .filter_map(|b| gcs_first.build_head(&b.record.bucket, &b.record.path).unwrap())
        .filter(|h| h.testgrid.is_some())
        .collect();
    assert!(
        with_facts.len() * 10 >= index.len() * 8,
        "{} of {} builds carry TestGrid's facts",
        with_facts.len(),
        index.len()
    );
    // A truncated JUnit upload: TestGrid fails the build its finished.json passes.
    let disagreeing: Vec<&BuildRecord> =
        index.iter().map(|b| &b.record).filter(|b| b.problems.iter().any(|p| p.starts_with(DISAGREEMENT))).collect();
    for b in &disagreeing {
        let p = b.problems.iter().find(|p| p.starts_with(DISAGREEMENT)).unwrap();
        assert!(p.contains("shows the build as FAILURE, its own result is SUCCESS"), "{}: {p}", b.path);
        assert!(b.problems.iter().any(|p| p.contains("junit") && !p.starts_with(DISAGREEMENT)), "{}", b.path);
    }
    println!("{} builds where TestGrid disagrees", disagreeing.len());
}

#[test]
fn bad_tabs_are_refused_by_name_and_the_rest_is_read() {
    let (_keep, w) = world();
    let d = w.join("testgrid").join("sig-release-master-blocking");
    let good_tab = std::fs::read_dir(d.join("table")).unwrap().flatten().next().unwrap().file_name();
    let good_tab = good_tab.to_string_lossy().to_string();
    let good: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("table").join(&good_tab)).unwrap()).unwrap();
    // A dashboard "bad" of six tabs: the good one and five broken copies of it.
    let root = w.join("bad-testgrid");
    std::fs::create_dir_all(root.join("bad").join("table")).unwrap();
    let mut tabs = serde_json::Map::new();
    let mut put = |name: &str, body: Vec<u8>| {
        std::fs::write(root.join("bad").join("table").join(name), body).unwrap();
        tabs.insert(name.to_string(), serde_json::json!({"overall_status": "FAILING"}));
    };
    put(&good_tab, serde_json::to_vec(&good).unwrap());
    put("html", b"<!DOCTYPE html><html><head><title>Server Error</title></head><body>oops</body></html>".to_vec());
    let mut rle = good.clone();
    rle["tests"][1]["statuses"][0]["count"] =
        serde_json::json!(rle["tests"][1]["statuses"][0]["count"].as_u64().unwrap() + 1);
    put("rle", serde_json::to_vec(&rle).unwrap());
    let mut no_id = good.clone();
    no_id["changelists"][2] = serde_json::json!("");
    put("no-build-id", serde_json::to_vec(&no_id).unwrap());
    let mut dup = good.clone();
    let first = dup["changelists"][0].clone();
    dup["changelists"][1] = first;
    put("duplicate-columns", serde_json::to_vec(&dup).unwrap());
    let mut badq = good.clone();
    badq["query"] = serde_json::json!("kubernetes-ci-logs/../../etc");
    put("bad-query", serde_json::to_vec(&badq).unwrap());
    std::fs::write(root.join("bad").join("summary"), serde_json::to_vec(&tabs).unwrap()).unwrap();

    let server = testgrid_server(root);
    let tg = TestgridHttp::new(&server.base, HttpOptions::default()).unwrap();
    let mut st = Store::open_in_memory().unwrap();
    let s = ingest_dashboard(&mut st, &tg, "bad", None, &TestgridOptions::default(), &|_| {}).unwrap();
    assert_eq!(s.tabs.iter().map(|t| t.tab.as_str()).collect::<Vec<_>>(), [good_tab.as_str()]);
    let why: BTreeMap<&str, &str> = s.failures.iter().map(|f| (f.tab.as_str(), f.reason.as_str())).collect();
    let expect = [
        ("html", "TestGrid tab \"html\": (body): an HTML page (titled \"Server Error\")"),
        ("rle", "TestGrid tab \"rle\": tests[1]"),
        ("no-build-id", "TestGrid tab \"no-build-id\": field \"changelists\"[2]: a column without a build id"),
        ("duplicate-columns", "TestGrid tab \"duplicate-columns\": field \"changelists\"[1]: duplicate column"),
        ("bad-query", "TestGrid tab \"bad-query\": field \"query\""),
    ];
    assert_eq!(why.len(), expect.len(), "{why:?}");
    for (tab, want) in expect {
        assert!(why[tab].starts_with(want), "{tab}: {}", why[tab]);
    }
    assert!(why["rle"].contains("the runs add up to"), "{}", why["rle"]);
    // Only the good tab is stored.
    let stored = st.testgrid_tabs().unwrap();
    assert_eq!(stored.iter().map(|t| t.tab.as_str()).collect::<Vec<_>>(), [good_tab.as_str()]);
    assert_eq!(st.build_counts().unwrap().0 as usize, s.tabs[0].columns);

    // A dashboard name that leaves its folder is refused before any request.
    let hits = server.hits.load(std::sync::atomic::Ordering::SeqCst);
    let e = ingest_dashboard(&mut st, &tg, "../bad", None, &TestgridOptions::default(), &|_| {}).unwrap_err();
    assert!(e.is_bad_input() && e.to_string().contains("\"../bad\""), "{e}");
    assert_eq!(server.hits.load(std::sync::atomic::Ordering::SeqCst), hits, "no request made");
}

/// Clustering reads TestGrid's messages as the failure texts: every failed result
/// with a message is placed in exactly one cluster, and the builds' failures group into
/// far fewer patterns than there are failures.
#[test]
fn testgrids_messages_cluster() {
    use citriage_patterns::cluster::{cluster, ClusterConfig, FailureRef};
    let (_keep, w) = world();
    let server = testgrid_server(w.join("testgrid"));
    let tg = TestgridHttp::new(&server.base, HttpOptions::default()).unwrap();
    let mut st = Store::open_in_memory().unwrap();
    read_testgrid(&mut st, &tg, &w);
    let mut texts: Vec<(String, String)> = Vec::new();
    st.for_each_failure_text(None, |_, _, name, text| texts.push((name.to_string(), text.to_string()))).unwrap();
    let refs: Vec<FailureRef<'_>> =
        texts.iter().map(|(n, t)| FailureRef { test: n, text: t, job: "", build: "" }).collect();
    let c = cluster(&refs, &ClusterConfig::new(citriage_patterns::normalize::Profile::Default));
    assert_eq!((c.accounting.input, c.accounting.clustered), (texts.len(), texts.len()));
    assert_eq!((c.accounting.missing, c.accounting.duplicated), (0, 0));
    assert!(
        texts.len() > 100 && c.clusters.len() * 5 < texts.len(),
        "{} failures, {} clusters",
        texts.len(),
        c.clusters.len()
    );
    assert!(texts.iter().all(|(_, t)| t.len() <= 140 + 20), "TestGrid's messages are short");
}

/// A TestGrid URL as a user copies it (a dashboard, a tab's page, a tab's table) and a
/// saved table answer read offline.
#[test]
fn urls_as_users_copy_them_and_saved_answers() {
    use citriage_ingest::testgrid::{fetch_url, ingest_saved_table};
    let (_keep, w) = world();
    let server = testgrid_server(w.join("testgrid"));
    let d = "sig-release-master-blocking";
    let tabs: Vec<String> = {
        let mut t: Vec<String> = std::fs::read_dir(w.join("testgrid").join(d).join("table"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into())
            .collect();
        t.sort();
        t
    };
    let opts = TestgridOptions::default();
    let mut st = Store::open_in_memory().unwrap();
    let one = fetch_url(
        &mut st,
        &format!("{}/{d}#{}&width=20", server.base, tabs[0]),
        HttpOptions::default(),
        &opts,
        &|_| {},
    )
    .unwrap();
    assert_eq!(one.tabs.iter().map(|t| t.tab.as_str()).collect::<Vec<_>>(), [tabs[0].as_str()]);
    let table = fetch_url(
        &mut st,
        &format!("{}/{d}/table?tab={}", server.base, tabs[1]),
        HttpOptions::default(),
        &opts,
        &|_| {},
    )
    .unwrap();
    assert_eq!(table.tabs[0].tab, tabs[1]);
    let all = fetch_url(&mut st, &format!("{}/{d}", server.base), HttpOptions::default(), &opts, &|_| {}).unwrap();
    assert_eq!(all.tabs.len(), tabs.len());
    let e = fetch_url(&mut st, &format!("{}/../{d}", server.base), HttpOptions::default(), &opts, &|_| {}).unwrap_err();
    assert!(e.is_bad_input() && e.to_string().contains("`..` path segment"), "{e}");
    let missing =
        fetch_url(&mut st, &format!("{}/no-such-dashboard", server.base), HttpOptions::default(), &opts, &|_| {})
            .unwrap_err();
    assert!(missing.is_bad_input() && missing.to_string().contains("404"), "{missing}");

    // Offline: a saved answer, as the tab it is named.
    let file = w.join("testgrid").join(d).join("table").join(&tabs[0]);
    let mut offline = Store::open_in_memory().unwrap();
    let s =
        ingest_saved_table(&mut offline, file.to_str().unwrap(), "saved", "tab-one", &HttpOptions::default(), &opts)
            .unwrap();
    assert_eq!(s.tabs[0].columns, one.tabs[0].columns);
    assert_eq!(offline.testgrid_tabs().unwrap()[0].dashboard, "saved");
    let html = w.join("error.html");
    std::fs::write(&html, "<html><head><title>Sign in</title></head></html>").unwrap();
    let e =
        ingest_saved_table(&mut offline, html.to_str().unwrap(), "saved", "tab-two", &HttpOptions::default(), &opts)
            .unwrap_err();
    assert!(e.is_bad_input() && e.to_string().contains("an HTML page (titled \"Sign in\")"), "{e}");
    assert_eq!(offline.testgrid_tabs().unwrap().len(), 1, "nothing of the bad answer stored");
}
