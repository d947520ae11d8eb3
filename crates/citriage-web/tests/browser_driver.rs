//! The dashboard driven through WebDriver (chromedriver + headless Chromium) over
//! the real server on the fixture store: the console check can fail, typing a
//! regex into the patterns filter and clicking Filter narrows the table and keeps
//! the regex in the URL, a job link leads to the job's history strip, hostile CI
//! names stay text, no page logs a console problem, and screenshots are PNGs
//! (kept in the directory `CITRIAGE_WEB_SCREENSHOTS` names, when set). Skipped,
//! with the reason printed, when Chromium or chromedriver is not installed.

mod common;
mod webdriver;

use common::{get_json, start, GOOD_JOB, HOSTILE_JOB, HOSTILE_TEXT};
use std::collections::BTreeSet;
use std::time::Duration;
use webdriver::{LogEntry, Session};

const WAIT: Duration = Duration::from_secs(15);
const PNG_MAGIC: &[u8] = b"\x89PNG\r\n\x1a\n";

fn session() -> Option<Session> {
    if let Some(why) = webdriver::unavailable() {
        eprintln!("skipped: {why}");
        return None;
    }
    Some(Session::start().unwrap_or_else(|e| panic!("browser session: {e}")))
}

/// Console entries at WARNING or SEVERE since the last call: failed loads (the
/// browser's own `/favicon.ico` request included), script errors, CSP refusals.
fn console_problems(s: &Session) -> Vec<LogEntry> {
    let log = s.browser_log().unwrap_or_else(|e| panic!("browser log: {e}"));
    log.into_iter().filter(|e| e.level == "SEVERE" || e.level == "WARNING").collect()
}

fn goto(s: &Session, url: &str) {
    s.goto(url).unwrap_or_else(|e| panic!("{url}: {e}"));
}

fn texts(s: &Session, css: &str) -> Vec<String> {
    let all = s.find_all(css).unwrap_or_else(|e| panic!("{css}: {e}"));
    all.iter().map(|e| e.text().unwrap_or_else(|err| panic!("{css} text: {err}"))).collect()
}

fn body_text(s: &Session) -> String {
    s.find("body").and_then(|b| b.text()).unwrap_or_else(|e| panic!("body text: {e}"))
}

/// Clicks the first link whose text is exactly `text`.
fn click_link(s: &Session, text: &str) {
    let links = s.find_all("a").expect("links");
    let link = links.iter().find(|a| a.text().is_ok_and(|t| t == text)).unwrap_or_else(|| panic!("no link {text:?}"));
    link.click().unwrap_or_else(|e| panic!("click {text:?}: {e}"));
}

/// Takes a screenshot, checks it is a PNG of the configured width with content,
/// and writes it to `$CITRIAGE_WEB_SCREENSHOTS/<name>.png` when that is set.
fn screenshot(s: &Session, name: &str) {
    let png = s.screenshot_png().unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(png.starts_with(PNG_MAGIC), "{name}: not a PNG");
    assert!(png.len() > 24 && &png[12..16] == b"IHDR", "{name}: no IHDR chunk");
    let width = u32::from_be_bytes([png[16], png[17], png[18], png[19]]);
    let height = u32::from_be_bytes([png[20], png[21], png[22], png[23]]);
    assert_eq!(width, 1280, "{name}: screenshot width (window is 1280 wide)");
    assert!(height > 500, "{name}: screenshot height {height}");
    assert!(png.len() > 5_000, "{name}: a {}-byte screenshot cannot show a page", png.len());
    if let Some(dir) = std::env::var_os("CITRIAGE_WEB_SCREENSHOTS") {
        let dir = std::path::PathBuf::from(dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, &png).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

/// The form-decoded value of a query parameter of `url`.
fn query_param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1.split('#').next()?;
    let raw = query.split('&').find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))?;
    let bytes = raw.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

#[test]
fn query_param_decodes_form_encoding() {
    let url = "http://h/clusters?exclude=&include=i%2Fo+time%28out%29%3F&sort=size#top";
    assert_eq!(query_param(url, "include").as_deref(), Some("i/o time(out)?"));
    assert_eq!(query_param(url, "exclude").as_deref(), Some(""));
    assert_eq!(query_param(url, "sort").as_deref(), Some("size"));
    assert_eq!(query_param(url, "profile"), None);
}

#[test]
fn console_errors_dialogs_and_missing_elements_are_caught() {
    let Some(s) = session() else { return };
    goto(
        &s,
        "data:text/html,<p id=p>probe</p><button id=b onclick=\"alert('dialog-probe')\">b</button>\
         <script>console.error('console-probe');console.log('info-probe')</script>",
    );
    let log = s.browser_log().expect("browser log");
    assert!(
        log.iter().any(|e| e.level == "SEVERE" && e.message.contains("console-probe")),
        "console.error not caught: {log:?}"
    );
    assert!(log.iter().any(|e| e.level == "INFO" && e.message.contains("info-probe")), "console.log: {log:?}");
    assert!(s.browser_log().expect("browser log").is_empty(), "the log is not emptied by reading it");
    assert_eq!(s.find("#p").and_then(|p| p.text()).expect("probe text"), "probe");

    let missing = s.find("#nowhere").err().expect("a missing element is an error");
    assert_eq!(missing.code, "no such element");
    assert!(missing.command.contains("/element") && missing.command.contains("#nowhere"), "{missing}");
    assert!(s.find_all("#nowhere").expect("find_all").is_empty());
    let waited = s.wait_for("#nowhere", Duration::from_millis(200)).err().expect("waiting in vain is an error");
    assert_eq!(waited.code, "timeout", "{waited}");

    // The XSS checks below rely on seeing dialogs: one opened by a script is seen.
    assert_eq!(s.alert_text().expect("no dialog yet"), None);
    s.find("#b").and_then(|b| b.click()).expect("click");
    assert_eq!(s.alert_text().expect("dialog").as_deref(), Some("dialog-probe"));
}

/// Whether a process is gone (no /proc entry) or dead and awaiting its reaper.
fn process_ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
    }
}

#[test]
fn a_panicking_test_leaves_no_driver_or_browser_behind() {
    if let Some(why) = webdriver::unavailable() {
        eprintln!("skipped: {why}");
        return;
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let unwound = std::panic::catch_unwind(move || {
        let s = Session::start().unwrap_or_else(|e| panic!("browser session: {e}"));
        tx.send(s.process_ids()).expect("send");
        panic!("deliberate panic with a browser open");
    });
    assert!(unwound.is_err(), "the closure panicked");
    let (driver, browser) = rx.recv().expect("process ids");
    let browser = browser.expect("the session reports the browser's process id");
    assert!(process_ended(driver), "chromedriver {driver} outlived the panic");
    // The browser is not our child and a kill lands asynchronously: allow it to finish dying.
    let deadline = std::time::Instant::now() + WAIT;
    while !process_ended(browser) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(process_ended(browser), "chromium {browser} outlived the panic");
}

#[test]
fn clusters_filter_narrows_the_table_and_keeps_the_regex_in_the_url() {
    let Some(s) = session() else { return };
    let srv = start();
    const REGEX: &str = r"i/o time(out)?\b";
    // Expected rows: the stored clusters whose text the regex matches.
    let (status, all) = get_json(&format!("{}/api/v1/clusters", srv.base));
    assert_eq!(status, 200);
    let all: Vec<(String, String)> = all["clusters"]
        .as_array()
        .expect("clusters")
        .iter()
        .map(|c| (c["stable_id"].as_str().expect("id").to_string(), c["key"].as_str().expect("key").to_string()))
        .collect();
    let re = regex::Regex::new(REGEX).expect("regex");
    let expected: BTreeSet<&str> = all.iter().filter(|(_, k)| re.is_match(k)).map(|(id, _)| id.as_str()).collect();
    assert!(!expected.is_empty() && expected.len() < all.len(), "the fixture must let the filter drop rows");
    // The clusters a page shows: one section per cluster, its id in the element id.
    let shown = |s: &Session| -> BTreeSet<String> {
        let sections = s.find_all("section.cluster").expect("cluster sections");
        sections
            .iter()
            .map(|e| {
                e.attr("id").expect("id").expect("a section id").strip_prefix("c-").expect("c- prefix").to_string()
            })
            .collect()
    };

    goto(&s, &format!("{}/clusters", srv.base));
    assert_eq!(shown(&s).len(), all.len(), "unfiltered, every cluster is listed");
    let field = s.find("input[name=include]").expect("include field");
    field.send_keys("zzz").expect("type");
    field.clear().expect("clear");
    field.send_keys(REGEX).expect("type");
    let buttons = s.find_all("button").expect("buttons");
    let filter = buttons.iter().find(|b| b.text().is_ok_and(|t| t == "Filter")).expect("a Filter button");
    filter.click().expect("click Filter");
    s.wait_until("a URL with include=", WAIT, |s| Ok(s.current_url()?.contains("include="))).expect("navigated");

    let url = s.current_url().expect("url");
    assert_eq!(query_param(&url, "include").as_deref(), Some(REGEX), "{url}");
    let shown = shown(&s);
    assert_eq!(shown.iter().map(String::as_str).collect::<BTreeSet<_>>(), expected, "rows after filtering by {REGEX}");
    let problems = console_problems(&s);
    assert!(problems.is_empty(), "console: {problems:?}");
    screenshot(&s, "clusters-filtered");
}

#[test]
fn job_link_leads_to_the_job_page_and_its_history_strip() {
    let Some(s) = session() else { return };
    let srv = start();
    let (status, detail) = get_json(&format!("{}/api/v1/jobs/{GOOD_JOB}", srv.base));
    assert_eq!(status, 200);
    let builds: Vec<String> = detail["builds"]
        .as_array()
        .expect("builds")
        .iter()
        .map(|b| format!("/builds/{GOOD_JOB}/{}", b["build_id"].as_str().expect("build id")))
        .collect();
    assert!(builds.len() > 1, "the fixture job has a history");

    goto(&s, &format!("{}/jobs", srv.base));
    click_link(&s, GOOD_JOB);
    let page = format!("{}/jobs/{GOOD_JOB}", srv.base);
    s.wait_until("the job page", WAIT, |s| Ok(s.current_url()? == page)).expect("navigated");
    assert!(s.title().expect("title").contains(GOOD_JOB), "title names the job");
    s.wait_for(".strip", WAIT).expect("history strip");
    let cells = s.find_all(".strip a").expect("strip cells");
    let hrefs: Vec<String> = cells.iter().map(|c| c.attr("href").expect("href").expect("a cell links")).collect();
    assert_eq!(hrefs, builds, "one cell per build, newest first, linking to the build's page");
    // A cell leads to the build's page, which links on to Prow.
    cells[0].click().expect("click the newest build");
    s.wait_until("the build page", WAIT, |s| Ok(s.current_url()?.ends_with(&builds[0]))).expect("navigated");
    s.wait_for("a[href^='https://prow.k8s.io/view/gs/']", WAIT).expect("the Spyglass link");
    let problems = console_problems(&s);
    assert!(problems.is_empty(), "console: {problems:?}");
}

#[test]
fn hostile_names_render_as_text() {
    let Some(s) = session() else { return };
    let srv = start();
    goto(&s, &format!("{}/jobs", srv.base));
    click_link(&s, HOSTILE_JOB);
    s.wait_until("the hostile job's page", WAIT, |s| Ok(s.current_url()?.contains("/jobs/%3Cscript"))).expect("nav");
    let pages = [
        ("/jobs".to_string(), HOSTILE_JOB),
        (s.current_url().expect("url").trim_start_matches(&srv.base).to_string(), HOSTILE_JOB),
        ("/clusters".into(), "<img src=x onerror=alert(2)>"),
        ("/search?q=alert&group=job".into(), "<b>bold test</b>"),
        ("/tests?name=%3Cb%3Ebold%20test%3C%2Fb%3E".into(), "<b>bold test</b>"),
    ];
    assert!(HOSTILE_TEXT.contains(pages[2].1));
    for (path, literal) in &pages {
        goto(&s, &format!("{}{path}", srv.base));
        assert!(body_text(&s).contains(literal), "{path}: {literal:?} is not shown as text");
        for tag in ["script", "img", "iframe", "object", "embed"] {
            assert!(s.find_all(tag).expect(tag).is_empty(), "{path}: a <{tag}> element was injected");
        }
        assert!(!texts(&s, "b").iter().any(|t| t == "bold test"), "{path}: a <b> element was injected");
        assert_eq!(s.alert_text().expect("alert"), None, "{path}: a dialog opened");
        let problems = console_problems(&s);
        assert!(problems.is_empty(), "{path}: console: {problems:?}");
    }
}

#[test]
fn every_page_renders_without_console_problems() {
    let Some(s) = session() else { return };
    let srv = start();
    // (path, screenshot name, an element the page must have)
    let pages = [
        ("/", "overview", "table"),
        ("/jobs", "jobs", "table a[href]"),
        (&*format!("/jobs/{GOOD_JOB}"), "job", ".strip a"),
        ("/jobs/%3Cscript%3Ealert(1)%3C%2Fscript%3E", "job-hostile", ".strip a"),
        ("/clusters", "clusters", "form input[name=include]"),
        ("/search?q=alert&group=job", "search", "mark"),
        ("/tests?name=%5Bsig-network%5D%20DNS%20resolves", "test", ".strip a"),
    ];
    assert!(console_problems(&s).is_empty(), "a fresh browser logs nothing");
    for (path, name, css) in pages {
        goto(&s, &format!("{}{path}", srv.base));
        assert!(!s.title().expect("title").trim().is_empty(), "{path}: no title");
        s.wait_for(css, WAIT).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert!(s.page_source().expect("source").contains("</html>"), "{path}: no document");
        let problems = console_problems(&s);
        assert!(problems.is_empty(), "{path}: console: {problems:?}");
        screenshot(&s, name);
    }
}
