//! The dashboard over a synthetic CI world, end to end: a tiny world is generated,
//! fetched from its local mirror, its dashboards imported, its failures clustered
//! with both profiles and its triage and payload reports written, all through the
//! `citriage` binary; then `citriage serve`'s server answers every page and API
//! route with figures that agree with what the commands printed, survives a bounded
//! load test with zero errors, and is driven in headless Chromium (each page loads
//! without console problems, a filter and a cluster are clicked, screenshots are
//! taken). The browser part is skipped, with the reason printed, without Chromium.

#[path = "../../citriage-web/tests/webdriver/mod.rs"]
mod webdriver;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;
use std::time::Duration;

mod common;

use common::bin;

/// `citriage --db DB --quiet ARGS...`, which must succeed.
fn run(db: &Path, args: &[&str]) -> Output {
    let o = common::run(db, args);
    assert!(o.status.success(), "citriage {args:?}: {}", common::stderr(&o));
    o
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&o.stdout)))
}

/// The world's store, built once per test binary: (folder kept alive, store, the
/// `cluster --format json` answers of both profiles).
struct World {
    _dir: tempfile::TempDir,
    db: PathBuf,
    clustered: Vec<serde_json::Value>,
}

fn world() -> &'static World {
    static W: OnceLock<World> = OnceLock::new();
    W.get_or_init(|| {
        let dir = tempfile::tempdir().expect("tempdir");
        let world = dir.path().join("world");
        let p = citriage_synth::SynthParams::preset("tiny").expect("tiny preset");
        citriage_synth::generate(&p, &world, &mut |_| {}).expect("generate");
        let db = dir.path().join("world.db");
        let mirror = world.join("gcs/kubernetes-ci-logs");
        let prowjobs = world.join("prow/prowjobs.js");
        run(
            &db,
            &[
                "fetch",
                "--mirror",
                mirror.to_str().expect("path"),
                "--all",
                "--prowjobs",
                prowjobs.to_str().expect("path"),
            ],
        );
        for ds in ["failures", "flakes"] {
            let mut files: Vec<PathBuf> = std::fs::read_dir(world.join("k8s-metrics").join(ds))
                .expect("dashboards")
                .map(|e| e.expect("entry").path())
                .collect();
            files.sort();
            for f in files {
                run(&db, &["import", f.to_str().expect("path"), "--dataset", ds]);
            }
            let out = dir.path().join(format!("triage-{ds}"));
            run(&db, &["triage", "--dataset", ds, "--out", out.to_str().expect("path")]);
        }
        // Two payloads of the world's stream, and the failures report verified.
        let eval = bin()
            .args(["--quiet", "--format", "json", "payload", "eval", "--from"])
            .arg(&world)
            .output()
            .expect("eval");
        let rows = json(&eval);
        for row in rows["rows"].as_array().expect("rows").iter().take(2) {
            let tag = row["tag"].as_str().expect("tag");
            run(&db, &["payload", tag, "--from", world.to_str().expect("path")]);
        }
        let date = json(&run(&db, &["--format", "json", "snapshots", "--dataset", "failures"]))["snapshots"]
            .as_array()
            .and_then(|s| s.last().cloned())
            .expect("a failures snapshot")["date"]
            .as_str()
            .expect("date")
            .to_string();
        // The verdict is the verifier's business; recording it is what matters here.
        let _ = bin()
            .arg("--db")
            .arg(&db)
            .args(["--quiet", "verify", "--offline", "--stored", &format!("triage/failures/{date}")])
            .output();
        let mut clustered = Vec::new();
        for profile in ["default", "k8s-triage"] {
            let out = dir.path().join(format!("clusters-{profile}"));
            let o =
                run(&db, &["--format", "json", "cluster", "--profile", profile, "--out", out.to_str().expect("path")]);
            clustered.push(json(&o));
        }
        World { _dir: dir, db, clustered }
    })
}

fn serve(db: &Path) -> citriage_web::Running {
    citriage_web::Server::bind(db.to_path_buf(), "127.0.0.1:0".parse().expect("addr"))
        .expect("bind")
        .spawn()
        .expect("serve")
}

fn get(url: &str) -> (u16, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let mut r = agent.get(url).call().unwrap_or_else(|e| panic!("{url}: {e}"));
    (r.status().as_u16(), r.body_mut().read_to_string().unwrap_or_else(|e| panic!("{url}: {e}")))
}

fn get_json(url: &str) -> serde_json::Value {
    let (status, body) = get(url);
    assert_eq!(status, 200, "{url}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{url}: {e}"))
}

/// The first line of the newest failure of a cluster (from its page's data), and that failure.
fn latest_line(base: &str, cluster: &serde_json::Value) -> (String, serde_json::Value) {
    let id = cluster["stable_id"].as_str().expect("id");
    let profile = cluster["profile"].as_str().expect("profile");
    let d = get_json(&format!("{base}/api/v1/clusters/{profile}/{}", pct(id)));
    let latest = d["latest"][0].clone();
    let line = latest["text"].as_str().expect("text").lines().next().expect("a line").to_string();
    (line, latest)
}

fn pct(s: &str) -> String {
    citriage_web::html::pct(s)
}

#[test]
fn every_route_agrees_with_the_commands() {
    let w = world();
    let srv = serve(&w.db);
    let base = srv.base_url();
    for (profile, c) in ["default", "k8s-triage"].iter().zip(&w.clustered) {
        let v = get_json(&format!("{base}/api/v1/clusters?profile={profile}&limit=1000"));
        assert_eq!(v["total"], c["clusters"], "{profile}: clusters listed = clusters the command made");
        assert_eq!(v["failures"], c["failures"], "{profile}: every clustered failure is counted once");
        let clusters = v["clusters"].as_array().expect("clusters");
        let sum: u64 = clusters.iter().map(|c| c["total"].as_u64().unwrap_or(0)).sum();
        assert_eq!(Some(sum), c["failures"].as_u64());
        for c in clusters.iter().take(15) {
            let id = c["stable_id"].as_str().expect("id");
            let d = get_json(&format!("{base}/api/v1/clusters/{profile}/{id}"));
            let jobs: u64 =
                d["jobs"].as_array().expect("jobs").iter().map(|j| j["failures"].as_u64().unwrap_or(0)).sum();
            assert_eq!(Some(jobs), c["total"].as_u64(), "{id}: failures by job add up");
            let latest = d["latest"].as_array().expect("latest");
            assert!(!latest.is_empty() && latest.len() <= 20, "{id}: latest failures");
            assert!(latest
                .iter()
                .all(|f| f["url"].as_str().is_some_and(|u| u.starts_with("https://prow.k8s.io/view/gs/"))));
            let (status, page) = get(&format!("{base}/clusters/{profile}/{}", pct(id)));
            assert_eq!(status, 200);
            assert!(page.contains("File an issue") && page.contains("<svg class=\"chart\""), "{id}");
        }
    }
    // Every job page, and each job's strip covers its builds.
    let jobs = get_json(&format!("{base}/api/v1/jobs"));
    let jobs = jobs.as_array().expect("jobs");
    assert!(jobs.len() > 10);
    let mut flaky_seen = 0;
    for j in jobs {
        let name = j["job"].as_str().expect("job");
        let d = get_json(&format!("{base}/api/v1/jobs/{}", pct(name)));
        assert_eq!(d["builds"].as_array().map(Vec::len), Some(j["builds"].as_u64().unwrap_or(0).min(200) as usize));
        flaky_seen += d["flaky_tests"].as_array().map_or(0, Vec::len);
        let (status, _) = get(&format!("{base}/jobs/{}", pct(name)));
        assert_eq!(status, 200, "{name}");
    }
    assert!(flaky_seen > 0, "the world plants flakes; some job must show a fired signal");
    // A test of the largest cluster: its history and the cluster it belongs to.
    let top = &get_json(&format!("{base}/api/v1/clusters"))["clusters"][0];
    let test = top["top_tests"][0]["name"].as_str().expect("a test");
    let t = get_json(&format!("{base}/api/v1/tests?name={}", pct(test)));
    assert!(t["jobs"].as_array().is_some_and(|j| !j.is_empty()));
    assert!(t["clusters"].as_array().expect("clusters").iter().any(|c| c["stable_id"] == top["stable_id"]));
    // Search finds the top cluster's latest failure by the first line of its text.
    let (needle, latest) = latest_line(&base, top);
    let s = get_json(&format!("{base}/api/v1/search?q={}&group=job&max=1000", pct(&regex::escape(&needle))));
    assert!(
        s["matches"]
            .as_array()
            .expect("matches")
            .iter()
            .any(|m| m["build_id"] == latest["build_id"] && m["name"] == latest["test"] && m["kind"] == "test"),
        "{needle:?} did not find build {} test {}",
        latest["build_id"],
        latest["test"]
    );
    // Overview, reports and payload pages answer.
    for path in
        ["/", "/jobs", "/clusters", "/search", "/tests", "/payloads", "/reports", "/api/v1/overview", "/api/v1/status"]
    {
        let (status, _) = get(&format!("{base}{path}"));
        assert_eq!(status, 200, "{path}");
    }
}

#[test]
fn a_bounded_load_test_has_no_errors() {
    let w = world();
    let srv = serve(&w.db);
    let view = srv.state.view();
    let urls = citriage_bench::serve::pick_urls(&view, 50);
    assert!(urls.iter().any(|u| u.0 == "cluster") && urls.iter().any(|u| u.0 == "job"));
    let spec = citriage_bench::serve::LoadSpec {
        clients: 24,
        requests: 1_500,
        seconds: 60,
        pages_per_kind: 50,
        prewarm: true,
    };
    let r = citriage_bench::serve::run_load(&srv.base_url(), &urls, &spec);
    assert_eq!(r.errors, 0, "errors: {:?}", r.error_samples);
    assert!(r.requests > 0 && r.requests <= 1_500 + spec.clients, "{} requests", r.requests);
    let per_kind: u64 = r.figures[1..4].iter().map(|f| f.requests as u64).sum();
    assert_eq!(per_kind, r.requests as u64, "every request is of one kind");
}

/// Takes a screenshot, checks it is a PNG with content, and keeps it in
/// `$CITRIAGE_WEB_SCREENSHOTS/<name>.png` when that is set.
fn screenshot(s: &webdriver::Session, name: &str) {
    let png = s.screenshot_png().unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 5_000, "{name}: not a real screenshot");
    if let Some(dir) = std::env::var_os("CITRIAGE_WEB_SCREENSHOTS") {
        let dir = PathBuf::from(dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        std::fs::write(dir.join(format!("world-{name}.png")), &png).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

fn console_problems(s: &webdriver::Session) -> Vec<webdriver::LogEntry> {
    let log = s.browser_log().unwrap_or_else(|e| panic!("browser log: {e}"));
    log.into_iter().filter(|e| e.level == "SEVERE" || e.level == "WARNING").collect()
}

#[test]
fn the_world_in_a_browser() {
    if let Some(why) = webdriver::unavailable() {
        eprintln!("skipped: {why}");
        return;
    }
    let w = world();
    let srv = serve(&w.db);
    let base = srv.base_url();
    let s = webdriver::Session::start().unwrap_or_else(|e| panic!("browser session: {e}"));
    let wait = Duration::from_secs(15);
    let jobs = get_json(&format!("{base}/api/v1/jobs"));
    let job = jobs[0]["job"].as_str().expect("a job").to_string();
    let top = get_json(&format!("{base}/api/v1/clusters"))["clusters"][0].clone();
    let test = top["top_tests"][0]["name"].as_str().expect("a test").to_string();
    let (needle, _) = latest_line(&base, &top);
    // (path, screenshot name, an element the page must have)
    let pages: Vec<(String, &str, &str)> = vec![
        ("/".into(), "overview", "section.snapshot"),
        ("/jobs".into(), "jobs", "table.jobs a[href]"),
        (format!("/jobs/{}", pct(&job)), "job", ".strip a.cell"),
        ("/clusters".into(), "clusters", "section.cluster svg.spark"),
        (format!("/tests?name={}", pct(&test)), "test", "section.test-job"),
        (format!("/search?q={}&group=job", pct(&regex::escape(&needle))), "search", "ol.matches mark"),
        ("/payloads".into(), "payloads", "main"),
        ("/reports".into(), "reports", "main"),
    ];
    for (path, name, css) in &pages {
        s.goto(&format!("{base}{path}")).unwrap_or_else(|e| panic!("{path}: {e}"));
        s.wait_for(css, wait).unwrap_or_else(|e| panic!("{path}: {e}"));
        let problems = console_problems(&s);
        assert!(problems.is_empty(), "{path}: console: {problems:?}");
        screenshot(&s, name);
    }

    // Search: near-identical matches are folded under the first, none lost.
    let q = pct(&regex::escape(&needle));
    let found = get_json(&format!("{base}/api/v1/search?q={q}"))["matches"].as_array().map(Vec::len).unwrap_or(0);
    s.goto(&format!("{base}/search?q={q}")).expect("search");
    let firsts = s.find_all("ol.matches > li").expect("matches").len();
    let folded = s.find_all("details.similar li").expect("folded").len();
    assert!(firsts > 0 && firsts + folded == found, "{firsts} shown + {folded} folded != {found} found");
    s.goto(&format!("{base}/search?q={q}&similar=all")).expect("search, every match");
    assert_eq!(s.find_all("ol.matches > li").expect("matches").len(), found);

    // A filter: CI jobs only, with a job regex, by growth; the list the page shows is
    // the list the API gives for the same query.
    s.goto(&format!("{base}/clusters")).expect("clusters");
    s.find("select[name=kind] option[value=ci]").and_then(|o| o.click()).expect("choose CI only");
    s.find("select[name=sort] option[value=growth]").and_then(|o| o.click()).expect("sort by growth");
    s.find("input[name=job]").and_then(|f| f.send_keys("e2e|kind")).expect("type a job regex");
    let buttons = s.find_all("button").expect("buttons");
    buttons.iter().find(|b| b.text().is_ok_and(|t| t == "Filter")).expect("Filter").click().expect("click Filter");
    s.wait_until("the filtered URL", wait, |s| Ok(s.current_url()?.contains("kind=ci"))).expect("navigated");
    let url = s.current_url().expect("url");
    assert!(url.contains("sort=growth") && url.contains("job=e2e%7Ckind"), "{url}");
    let query = url.split_once('?').map(|x| x.1).unwrap_or("");
    let api = get_json(&format!("{base}/api/v1/clusters?{query}"));
    let want: Vec<String> = api["clusters"]
        .as_array()
        .expect("clusters")
        .iter()
        .map(|c| format!("c-{}", pct(c["stable_id"].as_str().unwrap_or(""))))
        .collect();
    let shown: Vec<String> = s
        .find_all("section.cluster")
        .expect("sections")
        .iter()
        .map(|e| e.attr("id").expect("id").unwrap_or_default())
        .collect();
    assert!(!want.is_empty(), "the filter should keep some clusters: {url}");
    assert_eq!(shown, want, "the page lists what the API answers, in order");
    assert!(console_problems(&s).is_empty());
    screenshot(&s, "clusters-filtered");
    // Owners have one spelling: `sig/testing`, never `sig/sig-testing`.
    s.goto(&format!("{base}/clusters")).expect("clusters");
    let owners = texts(&s, "span.badge.owner");
    assert!(!owners.is_empty() && owners.iter().all(|o| o.starts_with("sig/") && !o.contains("sig-")), "{owners:?}");
    let api = get_json(&format!("{base}/api/v1/clusters"));
    for c in api["clusters"].as_array().expect("clusters") {
        let o = c["owner"].as_str().unwrap_or("");
        assert!(!o.starts_with("sig-") && !o.starts_with("sig/"), "stored owner {o:?}");
    }

    // A cluster: its header link leads to its page, with the issue link and its chart.
    let first = s.find("section.cluster h3 a").expect("a cluster link");
    let href = first.attr("href").expect("href").expect("a link");
    first.click().expect("click the cluster");
    s.wait_until("the cluster page", wait, |s| Ok(s.current_url()?.ends_with(&href))).expect("navigated");
    s.wait_for("svg.chart", wait).expect("failures chart");
    let issue = s
        .find_all("a")
        .expect("links")
        .into_iter()
        .find(|a| a.text().is_ok_and(|t| t.starts_with("File an issue in ")))
        .expect("a file-an-issue link");
    let label = issue.text().expect("text");
    let repo = label.trim_start_matches("File an issue in ").to_string();
    let issue = issue.attr("href").expect("href").expect("a link");
    assert!(issue.starts_with(&format!("https://github.com/{repo}/issues/new?title=")), "{issue}");
    let routed = body(&s);
    assert!(routed.contains(&format!("Issues go to {repo}")), "the page says where issues go: {routed}");
    let latest = s.find_all("table.latest tr").expect("rows");
    assert!(latest.len() > 1, "latest failures are listed");
    assert!(console_problems(&s).is_empty());
    screenshot(&s, "cluster");

    // A payload from the stream's list: its stored report under the dashboard's bar.
    s.goto(&format!("{base}/payloads")).expect("payloads");
    let link = s.find("table.payloads a").expect("an analysed payload");
    let href = link.attr("href").expect("href").expect("a link");
    link.click().expect("click the payload");
    s.wait_until("the payload page", wait, |s| Ok(s.current_url()?.ends_with(&href))).expect("navigated");
    s.wait_for("main h1", wait).expect("the report's heading");
    assert!(s.find("nav a[href='/payloads']").is_ok(), "the navigation bar above the report");
    // The main navigation, not a way back only; times spelled as on every page.
    for href in ["/", "/jobs", "/clusters", "/reports"] {
        assert!(s.find(&format!("nav.citriage-nav a[href='{href}']")).is_ok(), "{href} in the payload page's bar");
    }
    let text = body(&s);
    let iso = regex::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d").expect("regex");
    assert!(!iso.is_match(&text), "a second time format on the payload page: {:?}", iso.find(&text));
    let problems = console_problems(&s);
    assert!(problems.is_empty(), "inline styles of the stored report are allowed: {problems:?}");
    screenshot(&s, "payload");

    // A triage report from the reports list: rendered, with the verifier's findings.
    s.goto(&format!("{base}/reports")).expect("reports");
    let link = s
        .find_all("table.reports a")
        .expect("report links")
        .into_iter()
        .find(|a| a.attr("href").ok().flatten().is_some_and(|h| h.starts_with("/reports/triage/failures/")))
        .expect("the failures report");
    link.click().expect("click the report");
    s.wait_for("article.report h1", wait).expect("the rendered report");
    s.wait_for("section.verification", wait).expect("the verifier's result");
    let problems = console_problems(&s);
    assert!(problems.is_empty(), "{problems:?}");
    screenshot(&s, "report");

    // Jobs: filtered by a substring, sorted by newest failure, grouped by kind; every
    // job listed matches, and the choices stay in the URL and the form.
    s.goto(&format!("{base}/jobs")).expect("jobs");
    assert!(s.find_all("section.group h2").expect("groups").len() > 1, "jobs are grouped");
    // By TestGrid dashboard (the builds' testgrid-dashboards annotations), the
    // release-blocking board first, each of its jobs marked and placed by its tab.
    let groups = texts(&s, "section.group h2");
    assert!(groups[0].starts_with("sig-release-master-blocking"), "{groups:?}");
    let api_jobs = get_json(&format!("{base}/api/v1/jobs"));
    let blocking: Vec<&str> = api_jobs
        .as_array()
        .expect("jobs")
        .iter()
        .filter(|j| j["release_blocking"] == true)
        .filter_map(|j| j["job"].as_str())
        .collect();
    let first = s.find_all("section.group:first-of-type table.jobs tr td:first-child").expect("rows");
    assert_eq!(first.len(), blocking.len(), "the release-blocking group holds the release-blocking jobs");
    for row in &first {
        let t = row.text().expect("text");
        assert!(t.contains("release-blocking") && t.contains("TestGrid: sig-release-master-blocking"), "{t}");
    }
    assert!(!blocking.is_empty() && blocking.len() < api_jobs.as_array().map(Vec::len).unwrap_or(0));
    assert!(body(&s).contains(citriage_web::data::NO_DASHBOARD) || groups.len() > 2, "{groups:?}");
    screenshot(&s, "jobs-by-dashboard");
    s.find("input[name=q]").and_then(|f| f.send_keys("kops")).expect("type a substring");
    s.find("select[name=sort] option[value=newest_failure]").and_then(|o| o.click()).expect("sort");
    s.find("select[name=group] option[value=kind]").and_then(|o| o.click()).expect("group");
    click_button(&s, "Filter");
    s.wait_until("the filtered jobs", wait, |s| Ok(s.current_url()?.contains("q=kops"))).expect("navigated");
    let url = s.current_url().expect("url");
    assert!(url.contains("sort=newest_failure") && url.contains("group=kind"), "{url}");
    let listed = texts(&s, "table.jobs td:first-child a");
    assert!(!listed.is_empty(), "some kops jobs");
    assert!(listed.iter().all(|j| j.contains("kops")), "only matching jobs: {listed:?}");
    let all_jobs = get_json(&format!("{base}/api/v1/jobs"));
    let want =
        all_jobs.as_array().expect("jobs").iter().filter(|j| j["job"].as_str().unwrap_or("").contains("kops")).count();
    assert_eq!(listed.len(), want, "every kops job is listed once");
    assert_eq!(s.find("input[name=q]").and_then(|f| f.attr("value")).expect("q").as_deref(), Some("kops"));
    assert!(console_problems(&s).is_empty());
    screenshot(&s, "jobs-filtered");

    // A bad regex: a readable message above the form, which keeps it; fixed in place.
    s.goto(&format!("{base}/jobs?re=%28kops&sort=name")).expect("bad regex");
    let alert = s.wait_for("div.alert", wait).expect("an error box").text().expect("text");
    assert!(alert.contains("re (regex)"), "{alert}");
    assert_eq!(s.find("input[name=re]").and_then(|f| f.attr("value")).expect("re").as_deref(), Some("(kops"));
    screenshot(&s, "error-form-kept");
    // The page's own 400 is the only thing the console reports.
    let problems = console_problems(&s);
    assert!(problems.iter().all(|p| p.message.contains("400")), "{problems:?}");
    let field = s.find("input[name=re]").expect("the regex box");
    field.clear().expect("clear");
    field.send_keys("^e2e-kops").expect("type a fixed regex");
    click_button(&s, "Filter");
    s.wait_until("the fixed query", wait, |s| Ok(s.current_url()?.contains("re=%5Ee2e-kops"))).expect("navigated");
    assert!(s.find("div.alert").is_err(), "no error once fixed");
    let fixed = texts(&s, "table.jobs td:first-child a");
    assert!(!fixed.is_empty() && fixed.iter().all(|j| j.starts_with("e2e-kops")), "{fixed:?}");

    // Tests: a partial name lists the tests containing it instead of a 404.
    let part: String = test.chars().take(12.min(test.chars().count() - 1)).collect();
    s.goto(&format!("{base}/tests?name={}", pct(&part))).expect("partial test name");
    let names = texts(&s, "table.tests td:first-child a");
    assert!(names.iter().any(|n| n == &test), "{test} among the matches of {part:?}: {names:?}");
    assert!(names.iter().all(|n| n.to_lowercase().contains(&part.to_lowercase())), "{names:?}");
    screenshot(&s, "tests-partial");

    // Harness steps are flagged wherever tests are listed.
    s.goto(&format!("{base}/tests?sort=flaky")).expect("tests by flakiness");
    let flagged = s.find_all("table.tests span.flag").expect("flags");
    let harness: Vec<String> = texts(&s, "table.tests td:first-child a")
        .into_iter()
        .filter(|n| citriage_analysis::AnalysisConfig::default().is_harness(n))
        .collect();
    assert_eq!(flagged.len(), harness.len(), "each harness step listed carries the flag: {harness:?}");
    if let Some(h) = harness.first() {
        s.goto(&format!("{base}/tests?name={}", pct(h))).expect("a harness step's page");
        assert!(s.find("h2 span.flag").is_ok(), "{h}: flagged on its page");
        screenshot(&s, "test-flagged");
    } else {
        eprintln!("note: no harness step among this world's tests; the flag is checked on the list only");
    }

    // A build page: from a cluster's latest failure to the build, with its failed tests
    // (and the cluster they belong to), log excerpts with line numbers and artifacts.
    let cl = get_json(&format!("{base}/api/v1/clusters/default/{}", pct(top["stable_id"].as_str().expect("id"))));
    let f = &cl["latest"][0];
    let (job, build_id) = (f["job"].as_str().expect("job"), f["build_id"].as_str().expect("build"));
    let job = job.strip_prefix("pr:").unwrap_or(job);
    s.goto(&format!("{base}/builds/{}/{}", pct(job), pct(build_id))).expect("build page");
    s.wait_for("table.builds-failed", wait).expect("failed tests");
    let page = body(&s);
    assert!(page.contains(top["stable_id"].as_str().expect("id")), "the build's failures link their cluster");
    assert!(s.find_all("table.artifacts a").expect("artifacts").len() > 1, "artifact links");
    if s.find_all("pre.excerpt span.ln").expect("lines").is_empty() {
        eprintln!("note: build {job}/{build_id} has no stored log excerpt");
    }
    let api = get_json(&format!("{base}/api/v1/builds/{}/{}", pct(job), pct(build_id)));
    assert_eq!(
        api["failed"].as_array().map(Vec::len),
        Some(s.find_all("table.builds-failed tr").expect("rows").len() - 1)
    );
    let problems = console_problems(&s);
    assert!(problems.is_empty(), "{problems:?}");
    screenshot(&s, "build");
    // What the stored triage reports flag on a job is on its page.
    let flagged = all_jobs
        .as_array()
        .expect("jobs")
        .iter()
        .filter_map(|j| j["job"].as_str())
        .map(|j| (j.to_string(), get_json(&format!("{base}/api/v1/jobs/{}", pct(j)))))
        .find(|(_, d)| d["report_flags"].as_array().is_some_and(|f| !f.is_empty()));
    let (fjob, detail) = flagged.expect("the world's reports flag some job (always failing, one PR, ...)");
    s.goto(&format!("{base}/jobs/{}", pct(&fjob))).expect("a flagged job");
    let shown = s.wait_for("section.report-flags", wait).expect("the flags").text().expect("text");
    for f in detail["report_flags"].as_array().expect("flags") {
        assert!(shown.contains(f["kind"].as_str().expect("kind")), "{fjob}: {shown}");
    }
    screenshot(&s, "job-flagged");
    // ... and the overview names it among the jobs whose dashboard figures mislead.
    s.goto(&format!("{base}/")).expect("overview");
    let overview = body(&s);
    assert!(overview.contains("Where the dashboards' figures mislead") && overview.contains(&fjob), "{overview}");
    // The overview leads with what changed and matters: patterns of two failures or
    // more (no singletons), the drift since yesterday, failing jobs with the
    // release-blocking ones first, and severities as the dashboard and as the
    // corrected figures rate them.
    for cell in texts(&s, "table.moving td:nth-child(3)") {
        let after: u64 = cell.rsplit('→').next().and_then(|n| n.trim().parse().ok()).expect("a count");
        assert!(after >= 2, "a singleton leads the overview: {cell}");
    }
    let since = s.find("p.since-yesterday").and_then(|p| p.text()).expect("the drift since yesterday");
    assert!(since.starts_with("Since yesterday ("), "{since}");
    let failing = texts(&s, "ul.failing-now li");
    assert!(!failing.is_empty(), "jobs failing now");
    let marked: Vec<bool> = failing.iter().map(|l| l.contains("release-blocking")).collect();
    assert!(marked.windows(2).all(|w| w[0] >= w[1]), "release-blocking jobs first: {failing:?}");
    assert!(marked[0], "a release-blocking job fails in this world: {failing:?}");
    let tables = s.find_all("table.severity-compare").expect("severity tables");
    assert_eq!(tables.len(), 2, "one per stored dataset");
    let worse = texts(&s, "ul.worse li");
    assert!(
        worse.iter().any(|w| w.contains("dashboard good") && w.contains("corrected critical")),
        "an always-failing job the dashboard rates good is corrected: {worse:?}"
    );
    let h = s.find("section.changes").and_then(|e| e.text()).expect("the lead");
    assert!(h.find("Failing now").expect("failing") < h.find("Severity of the").expect("severity"), "{h}");
    screenshot(&s, "overview-changes");
    // An unknown build: the message and the job's list, not a bare error.
    s.goto(&format!("{base}/builds/{}/no-such-build", pct(job))).expect("unknown build");
    s.wait_for("div.alert", wait).expect("an error box");
    assert!(s.find("form[action='/jobs']").is_ok(), "the jobs form under the message");
}

fn body(s: &webdriver::Session) -> String {
    s.find("body").and_then(|b| b.text()).unwrap_or_else(|e| panic!("body text: {e}"))
}

fn texts(s: &webdriver::Session, css: &str) -> Vec<String> {
    let all = s.find_all(css).unwrap_or_else(|e| panic!("{css}: {e}"));
    all.iter().map(|e| e.text().unwrap_or_else(|err| panic!("{css} text: {err}"))).collect()
}

fn click_button(s: &webdriver::Session, label: &str) {
    let buttons = s.find_all("button").expect("buttons");
    buttons
        .iter()
        .find(|b| b.text().is_ok_and(|t| t == label))
        .unwrap_or_else(|| panic!("no {label} button"))
        .click()
        .expect("click");
}
