//! HTTP tests of every route against a server on a free port: JSON shapes and
//! figures, HTML pages, 400s and 404s, escaping of hostile CI text, gzip, headers
//! and graceful shutdown.

mod common;

use common::{get, get_json, start, GOOD_JOB, HOSTILE_JOB, HOSTILE_TEXT};
use std::io::{Read, Write};

#[test]
fn api_overview_counts_severity_categories_and_drift() {
    let srv = start();
    let (status, v) = get_json(&format!("{}/api/v1/overview", srv.base));
    assert_eq!(status, 200);
    assert_eq!(v["builds"], 7);
    assert_eq!(v["build_jobs"], 2);
    assert_eq!(v["clusters"], 2);
    let snaps = v["snapshots"].as_array().expect("snapshots");
    assert_eq!(snaps.len(), 1);
    let s = &snaps[0];
    assert_eq!(s["dataset"], "failures");
    assert_eq!(s["date"], "2026-11-20");
    assert_eq!(s["jobs"], 3);
    let sev: Vec<(String, u64)> = s["by_severity"]
        .as_array()
        .expect("severity")
        .iter()
        .map(|c| (c["name"].as_str().unwrap_or("").to_string(), c["count"].as_u64().unwrap_or(0)))
        .collect();
    assert_eq!(sev.len(), 6);
    assert!(sev.contains(&("critical".into(), 1)), "{sev:?}");
    let cat_total: u64 =
        s["by_category"].as_array().expect("cats").iter().map(|c| c["count"].as_u64().unwrap_or(0)).sum();
    assert_eq!(cat_total, 3);
    assert_eq!(s["drift"]["prior_date"], "2026-11-19");
    assert_eq!(s["drift"]["added"], serde_json::json!([HOSTILE_JOB, "ci-new-job"]));
    assert_eq!(s["drift"]["removed"], serde_json::json!(["ci-old-job"]));
    assert_eq!(v["newest_clusters"][0]["stable_id"], "c-xss");
}

#[test]
fn api_jobs_and_job_history() {
    let srv = start();
    let (status, v) = get_json(&format!("{}/api/v1/jobs", srv.base));
    assert_eq!(status, 200);
    let jobs = v.as_array().expect("jobs");
    assert_eq!(jobs.len(), 2);
    let good = jobs.iter().find(|j| j["job"] == GOOD_JOB).expect("good job");
    assert_eq!(good["builds"], 6);
    assert_eq!(good["passed"], 3);
    assert_eq!(good["failed"], 1);
    assert_eq!(good["errored"], 1);
    assert_eq!(good["aborted"], 1);
    assert_eq!(good["pass_rate"], 0.6);
    assert_eq!(good["last_outcome"], "pass");

    let (status, v) = get_json(&format!("{}/api/v1/jobs/{GOOD_JOB}", srv.base));
    assert_eq!(status, 200);
    let builds = v["builds"].as_array().expect("builds");
    assert_eq!(builds.len(), 6);
    // Newest first.
    assert_eq!(builds[0]["build_id"], "105");
    assert_eq!(builds[5]["build_id"], "100");
    assert_eq!(builds[4]["outcome"], "fail");
    assert_eq!(builds[4]["failed_tests"], 1);
    assert_eq!(builds[0]["url"], format!("https://prow.k8s.io/view/gs/kubernetes-ci-logs/logs/{GOOD_JOB}/105"));
    // Two builds a day over three days; the aborted one does not count.
    let daily = v["daily"].as_array().expect("daily");
    assert_eq!(daily.len(), 3);
    assert_eq!(daily[0]["day"], "2026-11-20");
    assert_eq!(daily[0]["passed"], 1);
    assert_eq!(daily[0]["finished"], 2);
    assert_eq!(v["failing_tests"], serde_json::json!([{"name": "[sig-network] DNS resolves", "count": 1}]));

    // Hostile name, percent-encoded, round-trips.
    let (status, v) = get_json(&format!("{}/api/v1/jobs/%3Cscript%3Ealert(1)%3C%2Fscript%3E", srv.base));
    assert_eq!(status, 200);
    assert_eq!(v["summary"]["job"], HOSTILE_JOB);

    let (status, v) = get_json(&format!("{}/api/v1/jobs/no-such-job", srv.base));
    assert_eq!(status, 404);
    assert!(v["error"].as_str().unwrap_or("").contains("no-such-job"));
}

#[test]
fn api_clusters_filters_and_sorts() {
    let srv = start();
    let (status, v) = get_json(&format!("{}/api/v1/clusters", srv.base));
    assert_eq!(status, 200);
    assert_eq!(v["total"], 2);
    assert_eq!(v["clusters"][0]["stable_id"], "c-dns");
    let (_, v) = get_json(&format!("{}/api/v1/clusters?sort=first_seen", srv.base));
    assert_eq!(v["clusters"][0]["stable_id"], "c-xss");
    let (_, v) = get_json(&format!("{}/api/v1/clusters?include=timeout", srv.base));
    assert_eq!(v["matching"], 1);
    assert_eq!(v["clusters"][0]["stable_id"], "c-dns");
    let (_, v) = get_json(&format!("{}/api/v1/clusters?exclude=timeout&profile=default", srv.base));
    assert_eq!(v["matching"], 1);
    assert_eq!(v["clusters"][0]["stable_id"], "c-xss");
    let (_, v) = get_json(&format!("{}/api/v1/clusters?profile=k8s-triage", srv.base));
    assert_eq!(v["matching"], 0);
    for bad in ["sort=nope", "profile=other", "include=(", "limit=0", "limit=abc"] {
        let (status, v) = get_json(&format!("{}/api/v1/clusters?{bad}", srv.base));
        assert_eq!(status, 400, "{bad}");
        assert!(v["error"].is_string(), "{bad}");
    }
}

#[test]
fn api_search_is_bounded_and_groups() {
    let srv = start();
    let (status, v) = get_json(&format!("{}/api/v1/search?q=i%2Fo%20timeout", srv.base));
    assert_eq!(status, 200);
    let m = v["matches"].as_array().expect("matches");
    assert_eq!(m.len(), 1);
    assert_eq!(m[0]["job"], GOOD_JOB);
    assert_eq!(m[0]["build_id"], "101");
    let ex = m[0]["excerpt"].as_str().unwrap_or("");
    let (a, b) = (m[0]["match_start"].as_u64().unwrap_or(0) as usize, m[0]["match_end"].as_u64().unwrap_or(0) as usize);
    assert_eq!(&ex[a..b], "i/o timeout");
    assert_eq!(v["scanned"], 2);

    let (_, v) = get_json(&format!("{}/api/v1/search?q=.&max=1&group=job", srv.base));
    assert_eq!(v["matches"].as_array().map(Vec::len), Some(1));
    assert_eq!(v["truncated"], true);
    assert_eq!(v["groups"].as_array().map(Vec::len), Some(2));

    let (_, v) = get_json(&format!("{}/api/v1/search?q=.&exclude_job=script", srv.base));
    assert_eq!(v["matches"].as_array().map(Vec::len), Some(1));
    let (_, v) = get_json(&format!("{}/api/v1/search?q=.&job=script", srv.base));
    assert_eq!(v["matches"][0]["excerpt"], HOSTILE_TEXT);
    // Only the newest day's builds: the hostile build and the good job's failure are older.
    let (_, v) = get_json(&format!("{}/api/v1/search?q=.&max_age_days=1", srv.base));
    assert_eq!(v["matches"].as_array().map(Vec::len), Some(0));

    let huge = format!("{}/api/v1/search?q={}", srv.base, "a".repeat(600));
    for url in [
        format!("{}/api/v1/search", srv.base),
        format!("{}/api/v1/search?q=(", srv.base),
        format!("{}/api/v1/search?q=%5Cw%7B1000%7D%5Cw%7B1000%7D", srv.base),
        format!("{}/api/v1/search?q=a&max=0", srv.base),
        format!("{}/api/v1/search?q=a&max_age_days=-1", srv.base),
        format!("{}/api/v1/search?q=a&group=test", srv.base),
        huge,
    ] {
        let (status, v) = get_json(&url);
        assert_eq!(status, 400, "{url}");
        assert!(v["error"].is_string());
    }
}

#[test]
fn api_test_history_across_jobs() {
    let srv = start();
    let (status, v) = get_json(&format!("{}/api/v1/tests?name=%5Bsig-network%5D%20DNS%20resolves", srv.base));
    assert_eq!(status, 200);
    assert_eq!(v["test"], "[sig-network] DNS resolves");
    let jobs = v["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0]["job"], GOOD_JOB);
    assert_eq!(jobs[0]["runs"], 6);
    assert_eq!(jobs[0]["failed"], 1);
    assert_eq!(jobs[0]["history"][0]["build_id"], "105");
    assert_eq!(jobs[0]["history"][4]["status"], "failed");
    let (status, v) = get_json(&format!("{}/api/v1/tests?name=%3Cb%3Ebold%20test%3C%2Fb%3E", srv.base));
    assert_eq!(status, 200);
    assert_eq!(v["jobs"][0]["job"], HOSTILE_JOB);
    let (status, _) = get_json(&format!("{}/api/v1/tests?name=nope", srv.base));
    assert_eq!(status, 404);
    let (status, _) = get_json(&format!("{}/api/v1/tests", srv.base));
    assert_eq!(status, 400);
}

#[test]
fn pages_render_and_escape_hostile_text() {
    let srv = start();
    let pages = [
        ("/", "Overview"),
        ("/jobs", "Jobs"),
        (&format!("/jobs/{GOOD_JOB}") as &str, "class=\"strip\""),
        ("/jobs/%3Cscript%3Ealert(1)%3C%2Fscript%3E", "History"),
        ("/clusters?include=&sort=size", "Patterns"),
        ("/search", "Search"),
        ("/search?q=alert&group=job", "<mark>alert</mark>"),
        ("/tests", "Test history"),
        ("/tests?name=%3Cb%3Ebold%20test%3C%2Fb%3E", "&lt;b&gt;bold test&lt;/b&gt;"),
    ];
    for (path, expect) in pages {
        let (status, ctype, body) = get(&format!("{}{path}", srv.base));
        assert_eq!(status, 200, "{path}");
        assert!(ctype.starts_with("text/html"), "{path}: {ctype}");
        assert!(body.contains(expect), "{path} lacks {expect}");
        assert!(!body.contains("<script"), "{path} carries a script element");
        assert!(!body.contains("<img"), "{path} carries an img element");
        assert!(!body.contains("<b>bold"), "{path} carries raw markup");
    }
    let (_, _, body) = get(&format!("{}/jobs", srv.base));
    assert!(body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(body.contains("href=\"/jobs/%3Cscript%3Ealert%281%29%3C%2Fscript%3E\""));
    let (_, _, body) = get(&format!("{}/clusters", srv.base));
    assert!(body.contains("&lt;img src=x onerror=alert(2)&gt;"));
    let (_, _, body) = get(&format!("{}/jobs/{GOOD_JOB}", srv.base));
    assert!(body.contains("<svg class=\"chart\""));
    assert_eq!(body.matches("class=\"cell ").count(), 6);
    assert!(body.contains("<a href=\"/tests?name=%5Bsig-network%5D%20DNS%20resolves\">"));
    // Filters are echoed into the form, escaped.
    let (_, _, body) = get(&format!("{}/clusters?include=%22%3E%3Cscript%3E", srv.base));
    assert!(body.contains("value=\"&quot;&gt;&lt;script&gt;\""));
}

#[test]
fn errors_are_pages_with_status() {
    let srv = start();
    let (status, _, body) = get(&format!("{}/jobs/no-such-job", srv.base));
    assert_eq!(status, 404);
    assert!(body.contains("no stored builds"));
    let (status, _, _) = get(&format!("{}/no/such/page", srv.base));
    assert_eq!(status, 404);
    let (status, _, body) = get(&format!("{}/search?q=%28", srv.base));
    assert_eq!(status, 400);
    assert!(body.contains("class=\"error\""));
    // Paths that look like files outside the store are just unknown pages.
    let (status, _, body) = get(&format!("{}/static/..%2F..%2FCargo.toml", srv.base));
    assert_eq!(status, 404);
    assert!(!body.contains("[package]"));
}

#[test]
fn stylesheet_is_embedded_and_cacheable() {
    let srv = start();
    let client: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let mut res = client.get(&format!("{}/static/style.css", srv.base)).call().expect("css");
    assert_eq!(res.status().as_u16(), 200);
    let h = |res: &ureq::http::Response<ureq::Body>, k: &str| {
        res.headers().get(k).and_then(|v| v.to_str().ok()).unwrap_or("").to_string()
    };
    assert!(h(&res, "content-type").starts_with("text/css"));
    assert!(h(&res, "cache-control").contains("max-age"));
    assert!(res.body_mut().read_to_string().expect("body").contains(".strip"));
    let mut res = client.get(&format!("{}/", srv.base)).call().expect("page");
    assert_eq!(h(&res, "cache-control"), "no-cache");
    assert!(h(&res, "content-security-policy").contains("default-src 'none'"));
    assert_eq!(h(&res, "x-content-type-options"), "nosniff");
    // Pages link the stylesheet by content version, and that URL serves it too.
    let page = res.body_mut().read_to_string().expect("page body");
    let at = page.find("/static/style.css?v=").expect("versioned stylesheet link");
    let href: String = page[at..].chars().take_while(|c| *c != '"').collect();
    assert_eq!(href.len(), "/static/style.css?v=".len() + 16, "{href}");
    let res = client.get(&format!("{}{href}", srv.base)).call().expect("versioned css");
    assert_eq!(res.status().as_u16(), 200);
}

/// A raw HTTP/1.1 GET asking for gzip; returns the response head and body bytes.
fn raw_get(base: &str, path: &str) -> (String, Vec<u8>) {
    let addr = base.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n")
        .expect("write");
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).expect("read");
    let split = buf.windows(4).position(|w| w == b"\r\n\r\n").expect("head") + 4;
    (String::from_utf8_lossy(&buf[..split]).to_ascii_lowercase(), buf[split..].to_vec())
}

#[test]
fn responses_are_gzipped_when_asked() {
    let srv = start();
    let (head, body) = raw_get(&srv.base, "/api/v1/overview");
    assert!(head.contains("content-encoding: gzip"), "{head}");
    // Chunked or not, a gzip member starts with its magic number somewhere early.
    assert!(body.windows(2).take(16).any(|w| w == [0x1f, 0x8b]), "no gzip magic");
    let (head, _) = raw_get(&srv.base, "/static/style.css");
    assert!(head.contains("content-encoding: gzip"), "{head}");
}

#[test]
fn graceful_shutdown_and_missing_store() {
    let srv = start();
    let (status, _, _) = get(&format!("{}/", srv.base));
    assert_eq!(status, 200);
    let base = srv.base.clone();
    srv.stop().expect("clean stop");
    let addr = base.trim_start_matches("http://");
    assert!(std::net::TcpStream::connect(addr).is_err(), "still listening after shutdown");

    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("absent.db");
    let err = citriage_web::Server::bind(missing.clone(), "127.0.0.1:0".parse().expect("addr"));
    assert!(matches!(err, Err(citriage_web::ServeError::MissingStore(_))));
    assert!(!missing.exists(), "bind must not create a store");
}

#[test]
fn concurrent_requests_all_answer_identically() {
    let srv = start();
    let url = format!("{}/api/v1/overview", srv.base);
    let (_, _, first) = get(&url);
    let handles: Vec<_> = (0..12)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || get(&url))
        })
        .collect();
    for h in handles {
        let (status, _, body) = h.join().expect("client thread");
        assert_eq!(status, 200);
        assert_eq!(body, first, "answers must be deterministic");
    }
}
