//! HTTP tests of every route against a server on a free port: JSON shapes and
//! figures, HTML pages, 400s and 404s, escaping of hostile CI text, gzip, ETags and
//! 304s, the Host check, headers, refreshing after the store changes, and graceful
//! shutdown.

mod common;

use common::{
    get, get_json, start, start_with, GOOD_JOB, HOSTILE_JOB, HOSTILE_TEXT, PAYLOAD_JSON, PAYLOAD_TAG, REPORT_MD,
};
use serde_json::json;
use std::io::{Read, Write};

#[test]
fn api_index_lists_the_routes() {
    let srv = start();
    let (status, v) = get_json(&format!("{}/api/v1/", srv.base));
    assert_eq!(status, 200);
    let routes = v["routes"].as_array().expect("routes");
    assert!(routes.iter().any(|r| r == "/api/v1/clusters/{profile}/{stable_id}"));
    assert!(routes.len() >= 12);
    let (status, v) = get_json(&format!("{}/api/v1/status", srv.base));
    assert_eq!(status, 200);
    assert_eq!(v["builds"], 7);
    assert_eq!(v["profiles"], json!(["default"]));
    // Two failure texts and one log excerpt, all distinct.
    assert_eq!(v["search"]["entries"], 4);
}

#[test]
fn api_overview_counts_severity_categories_and_drift() {
    let srv = start();
    let (status, v) = get_json(&format!("{}/api/v1/overview", srv.base));
    assert_eq!(status, 200);
    assert_eq!(v["builds"], 7);
    assert_eq!(v["build_jobs"], 2);
    assert_eq!(v["clusters"], json!({"default": 2}));
    // One per stored document (kind and key), whatever the formats it is kept in.
    assert_eq!(v["documents"], 3);
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
    assert_eq!(s["drift"]["added"], json!([HOSTILE_JOB, "ci-new-job"]));
    assert_eq!(s["drift"]["removed"], json!(["ci-old-job"]));
    // The DNS cluster appeared later than the hostile one.
    assert_eq!(v["newest_clusters"][0]["stable_id"], "c-dns");
    assert_eq!(v["newest_clusters"][1]["stable_id"], "c-xss");
    // The window's test results: those of the builds started in the 14 days before the
    // end of the newest build's day, counted here from the store directly.
    let mut st = citriage_store::Store::open(&srv.dir.path().join("citriage.db")).expect("store");
    let index = st.build_index().expect("index");
    let newest = index.iter().filter_map(|b| b.record.started).max().expect("a started build");
    let since = citriage_model::Day::from_unix_seconds(newest).end_seconds() - 14 * citriage_model::time::DAY;
    let mut want = 0u64;
    for job in st.build_jobs().expect("jobs") {
        let builds = st.job_builds_with_tests(&job, Some(since)).expect("builds");
        want +=
            builds.iter().filter(|b| b.started.is_some_and(|t| t > since)).map(|b| b.tests.len() as u64).sum::<u64>();
    }
    assert!(want > 0);
    assert_eq!(v["window_test_results"], want);
    assert_eq!(v["window_days"], 14);
    let (_, _, page) = get(&format!("{}/", srv.base));
    assert!(page.contains(&format!("<b>{want}</b> test results in the last 14 days")), "{page}");
}

#[test]
fn api_jobs_and_job_history_with_flake_signals() {
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
    // Build 102 passed after a failed attempt: a flake cell, not a plain pass.
    assert_eq!(builds[3]["build_id"], "102");
    assert_eq!(builds[3]["outcome"], "pass");
    assert_eq!(builds[3]["cell"], "flake");
    assert_eq!(builds[0]["cell"], "pass");
    assert_eq!(builds[0]["url"], format!("https://prow.k8s.io/view/gs/kubernetes-ci-logs/logs/{GOOD_JOB}/105"));
    // Two builds a day over three days; the aborted one does not count.
    let daily = v["daily"].as_array().expect("daily");
    assert_eq!(daily.len(), 3);
    assert_eq!(daily[0]["day"], "2026-11-20");
    assert_eq!(daily[0]["passed"], 1);
    assert_eq!(daily[0]["finished"], 2);
    assert_eq!(
        v["failing_tests"],
        json!([{"name": "[sig-network] DNS resolves", "count": 1}, {"name": "[sig-node] pods run", "count": 1}])
    );
    // The retried test's in-run retry signal fired.
    let flaky = v["flaky_tests"].as_array().expect("flaky tests");
    let pods = flaky.iter().find(|t| t["name"] == "[sig-node] pods run").expect("pods run is flaky");
    assert!(pods["signals"].as_array().expect("signals").iter().any(|s| s["kind"] == "in-run-retry"), "{pods}");
    assert!(v["figures"]["tests"].is_null() || v["figures"]["tests"] == json!([]), "per-test list moved out");
    assert_eq!(v["figures"]["sample"], 4);

    // Hostile name, percent-encoded, round-trips.
    let (status, v) = get_json(&format!("{}/api/v1/jobs/%3Cscript%3Ealert(1)%3C%2Fscript%3E", srv.base));
    assert_eq!(status, 200);
    assert_eq!(v["summary"]["job"], HOSTILE_JOB);

    let (status, v) = get_json(&format!("{}/api/v1/jobs/no-such-job", srv.base));
    assert_eq!(status, 404);
    assert!(v["error"].as_str().unwrap_or("").contains("no-such-job"));
}

#[test]
fn api_clusters_filter_sort_and_count() {
    let srv = start();
    let (status, v) = get_json(&format!("{}/api/v1/clusters", srv.base));
    assert_eq!(status, 200);
    assert_eq!(v["profile"], "default");
    assert_eq!(v["total"], 2);
    assert_eq!(v["failures"], 2);
    assert_eq!(v["first_day"], "2026-11-20");
    assert_eq!(v["last_day"], "2026-11-22");
    // Equal totals: ties by stable id.
    assert_eq!(v["clusters"][0]["stable_id"], "c-dns");
    let dns = &v["clusters"][0];
    assert_eq!(dns["total"], 1);
    assert_eq!(dns["per_day"], json!([1, 0, 0]));
    assert_eq!(dns["today"], 0);
    // Today 0 against a mean of 0.5 over the days before.
    assert_eq!(dns["growth"], -0.5);
    assert_eq!(dns["top_jobs"][0]["name"], GOOD_JOB);
    assert_eq!(dns["top_tests"][0]["name"], "[sig-network] DNS resolves");
    assert_eq!(dns["signatures"], json!(["dns-timeout"]));
    assert_eq!(v["owners"], json!(["network"]));

    let ids = |q: &str| -> Vec<String> {
        let (status, v) = get_json(&format!("{}/api/v1/clusters?{q}", srv.base));
        assert_eq!(status, 200, "{q}");
        v["clusters"]
            .as_array()
            .expect("clusters")
            .iter()
            .map(|c| c["stable_id"].as_str().unwrap_or("").to_string())
            .collect()
    };
    assert_eq!(ids("sort=first_seen"), ["c-dns", "c-xss"]);
    assert_eq!(ids("include=timeout"), ["c-dns"]);
    assert_eq!(ids("exclude=timeout"), ["c-xss"]);
    assert_eq!(ids("job=script"), ["c-xss"]);
    assert_eq!(ids("exclude_job=script"), ["c-dns"]);
    assert_eq!(ids("test=DNS"), ["c-dns"]);
    assert_eq!(ids("exclude_test=bold"), ["c-dns"]);
    assert_eq!(ids("kind=ci"), ["c-dns", "c-xss"]);
    assert!(ids("kind=pr").is_empty(), "no presubmit failures in the fixture");
    assert_eq!(ids("owner=network"), ["c-dns"]);
    assert_eq!(ids("signature=known"), ["c-dns"]);
    assert_eq!(ids("signature=unknown"), ["c-xss"]);
    assert_eq!(ids("signature=dns-timeout&limit=1"), ["c-dns"]);
    let (_, v) = get_json(&format!("{}/api/v1/clusters?limit=1", srv.base));
    assert_eq!((v["matching"].as_u64(), v["clusters"].as_array().map(Vec::len)), (Some(2), Some(1)));
    // Paging: the second of two.
    assert_eq!(ids("limit=1&offset=1"), ["c-xss"]);
    assert!(ids("offset=2").is_empty());
    let (_, _, page) = get(&format!("{}/clusters?limit=1&sort=total", srv.base));
    assert!(page.contains("href=\"/clusters?limit=1&amp;sort=total&amp;offset=1\">next →</a>"), "no next link");

    let (status, v) = get_json(&format!("{}/api/v1/clusters?profile=k8s-triage", srv.base));
    assert_eq!(status, 404, "no k8s-triage run is stored");
    assert!(v["error"].as_str().unwrap_or("").contains("k8s-triage"));
    for bad in ["sort=nope", "profile=other", "include=(", "job=(", "limit=0", "limit=abc", "kind=batch", "offset=-1"] {
        let (status, v) = get_json(&format!("{}/api/v1/clusters?{bad}", srv.base));
        assert_eq!(status, 400, "{bad}");
        assert!(v["error"].is_string(), "{bad}");
    }
}

#[test]
fn api_cluster_detail_with_latest_failures() {
    let srv = start();
    let (status, v) = get_json(&format!("{}/api/v1/clusters/default/c-dns", srv.base));
    assert_eq!(status, 200);
    assert_eq!(v["cluster"]["stable_id"], "c-dns");
    assert_eq!(v["cluster"]["spans"], json!([9, 11, 23]));
    assert_eq!(v["jobs"], json!([{"name": GOOD_JOB, "failures": 1, "per_day": [1, 0, 0]}]));
    assert_eq!((v["jobs_total"].as_u64(), v["tests_total"].as_u64()), (Some(1), Some(1)));
    let latest = v["latest"].as_array().expect("latest");
    assert_eq!(latest.len(), 1);
    assert_eq!(latest[0]["build_id"], "101");
    assert_eq!(latest[0]["test"], "[sig-network] DNS resolves");
    assert_eq!(latest[0]["text"], "dial tcp 10.0.0.1:53: i/o timeout after 30s");
    assert_eq!(latest[0]["url"], format!("https://prow.k8s.io/view/gs/kubernetes-ci-logs/logs/{GOOD_JOB}/101"));
    let (status, _) = get_json(&format!("{}/api/v1/clusters/default/nope", srv.base));
    assert_eq!(status, 404);
    let (status, _) = get_json(&format!("{}/api/v1/clusters/k8s-triage/c-dns", srv.base));
    assert_eq!(status, 404);
}

#[test]
fn api_search_uses_texts_and_log_excerpts() {
    let srv = start();
    let (status, v) = get_json(&format!("{}/api/v1/search?q=i%2Fo%20timeout", srv.base));
    assert_eq!(status, 200);
    // Answered from the trigram index: only texts holding every trigram were verified.
    assert_eq!(v["used_index"], true);
    assert_eq!(v["scanned"], 2, "the DNS text and the log excerpt are the only candidates");
    let m = v["matches"].as_array().expect("matches");
    // The failed test's text and the log excerpt of the same build.
    assert_eq!(m.len(), 2, "{v}");
    assert!(m.iter().all(|x| x["job"] == GOOD_JOB && x["build_id"] == "101"));
    let test = m.iter().find(|x| x["kind"] == "test").expect("test match");
    assert_eq!(test["name"], "[sig-network] DNS resolves");
    let ex = test["excerpt"].as_str().unwrap_or("");
    let (a, b) = (test["match_start"].as_u64().unwrap_or(0) as usize, test["match_end"].as_u64().unwrap_or(0) as usize);
    assert_eq!(&ex[a..b], "i/o timeout");
    let log = m.iter().find(|x| x["kind"] == "log").expect("log match");
    assert_eq!((log["name"].as_str(), log["line"].as_u64()), (Some("build-log.txt"), Some(43)));
    // Context: one line before the matching log line.
    assert_eq!(
        log["excerpt"],
        "E1120 12:00:01 dns.go:10] lookup failed\nF1120 12:00:02 dial tcp 10.0.0.1:53: i/o timeout"
    );
    let (_, v) = get_json(&format!("{}/api/v1/search?q=i%2Fo%20timeout&context=0&within=logs", srv.base));
    assert_eq!(v["matches"][0]["excerpt"], "F1120 12:00:02 dial tcp 10.0.0.1:53: i/o timeout");
    assert_eq!(v["matches"].as_array().map(Vec::len), Some(1));
    let (_, v) = get_json(&format!("{}/api/v1/search?q=i%2Fo%20timeout&within=tests", srv.base));
    assert_eq!(v["matches"].as_array().map(Vec::len), Some(1));

    let (_, v) = get_json(&format!("{}/api/v1/search?q=.&max=1&group=job", srv.base));
    assert_eq!(v["used_index"], false, "no literal: every distinct text is scanned");
    assert_eq!(v["matches"].as_array().map(Vec::len), Some(1));
    assert_eq!(v["truncated"], true);
    assert_eq!(v["found"], 4);
    assert_eq!(v["groups"], json!([{"job": HOSTILE_JOB, "matches": 1}, {"job": GOOD_JOB, "matches": 3}]));
    // Newest first: build 102's retried attempt.
    assert_eq!(v["matches"][0]["build_id"], "102");

    let (_, v) = get_json(&format!("{}/api/v1/search?q=.&exclude_job=script", srv.base));
    assert_eq!(v["matches"].as_array().map(Vec::len), Some(3));
    let (_, v) = get_json(&format!("{}/api/v1/search?q=.&job=script", srv.base));
    assert_eq!(v["matches"][0]["excerpt"], HOSTILE_TEXT);
    // Only builds within a day of the newest: the failures sit in older builds.
    let (_, v) = get_json(&format!("{}/api/v1/search?q=.&max_age_days=1", srv.base));
    assert_eq!(v["matches"].as_array().map(Vec::len), Some(0));

    let huge = format!("{}/api/v1/search?q={}", srv.base, "a".repeat(600));
    for url in [
        format!("{}/api/v1/search", srv.base),
        format!("{}/api/v1/search?q=(", srv.base),
        format!("{}/api/v1/search?q=%5Cw%7B1000%7D%5Cw%7B1000%7D", srv.base),
        format!("{}/api/v1/search?q=a&max=0", srv.base),
        format!("{}/api/v1/search?q=a&max_age_days=-1", srv.base),
        format!("{}/api/v1/search?q=a&context=99", srv.base),
        format!("{}/api/v1/search?q=a&group=test", srv.base),
        format!("{}/api/v1/search?q=a&within=nowhere", srv.base),
        huge,
    ] {
        let (status, v) = get_json(&url);
        assert_eq!(status, 400, "{url}");
        assert!(v["error"].is_string());
    }
}

#[test]
fn api_test_history_across_jobs_with_clusters() {
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
    assert_eq!(
        v["clusters"],
        json!([{"profile": "default", "stable_id": "c-dns", "key": "dial tcp UNIQ1: i/o timeout after DURATION", "failures": 1}])
    );
    // Always passing elsewhere: counts without a history strip.
    let (_, v) = get_json(&format!("{}/api/v1/tests?name=%5Bsig-node%5D%20pods%20run", srv.base));
    assert_eq!(v["jobs"][0]["runs"], 7, "six builds plus the retried attempt");
    assert_eq!(v["jobs"][0]["failed"], 1);
    let (status, v) = get_json(&format!("{}/api/v1/tests?name=%3Cb%3Ebold%20test%3C%2Fb%3E", srv.base));
    assert_eq!(status, 200);
    assert_eq!(v["jobs"][0]["job"], HOSTILE_JOB);
    let (status, _) = get_json(&format!("{}/api/v1/tests?name=nope", srv.base));
    assert_eq!(status, 404);
    let (status, _) = get_json(&format!("{}/api/v1/tests", srv.base));
    assert_eq!(status, 400);
}

#[test]
fn api_payloads_and_reports() {
    let srv = start();
    let (status, v) = get_json(&format!("{}/api/v1/payloads", srv.base));
    assert_eq!(status, 200);
    let s = &v[0];
    assert_eq!(s["stream"], "4.22.0-0.nightly");
    assert_eq!((s["accepted"].as_u64(), s["rejected"].as_u64()), (Some(1), Some(1)));
    assert_eq!(s["payloads"][0]["tag"], PAYLOAD_TAG, "newest first");
    assert_eq!(s["payloads"][0]["analyzed"], true);
    assert_eq!(s["payloads"][0]["verdict"], "BISECT");
    assert_eq!(s["payloads"][0]["blocking_failed"], 2);
    assert_eq!(s["payloads"][1]["analyzed"], false);
    assert_eq!(
        s["per_day"],
        json!([{"day": "2026-11-19", "accepted": 1, "rejected": 0, "other": 0}, {"day": "2026-11-20", "accepted": 0, "rejected": 1, "other": 0}])
    );
    let (status, _, body) = get(&format!("{}/api/v1/payloads/{PAYLOAD_TAG}", srv.base));
    assert_eq!(status, 200);
    assert_eq!(body, PAYLOAD_JSON);
    let (status, _) = get_json(&format!("{}/api/v1/payloads/4.22.0-nope", srv.base));
    assert_eq!(status, 404);

    let (status, v) = get_json(&format!("{}/api/v1/reports", srv.base));
    assert_eq!(status, 200);
    let kinds: Vec<(&str, &str)> = v
        .as_array()
        .expect("reports")
        .iter()
        .map(|r| (r["kind"].as_str().unwrap_or(""), r["key"].as_str().unwrap_or("")))
        .collect();
    // The verifier's result is shown with the report it verified, not on its own.
    assert_eq!(kinds, [("payload", PAYLOAD_TAG), ("triage", "failures/2026-11-20")]);
    let triage = &v[1];
    assert_eq!(triage["media_types"], json!(["application/json", "text/markdown"]));
    assert_eq!(triage["verification"]["verdict"], "fail");
    assert_eq!(triage["verification"]["findings"], 1);
    let (status, v) = get_json(&format!("{}/api/v1/reports/triage/failures/2026-11-20", srv.base));
    assert_eq!(status, 200);
    assert_eq!(v["media_type"], "text/markdown");
    assert_eq!(v["body"], REPORT_MD);
    assert_eq!(v["verification"]["findings"][0]["line"], 7);
    let (status, _) = get_json(&format!("{}/api/v1/reports/triage/failures/1999-01-01", srv.base));
    assert_eq!(status, 404);
}

#[test]
fn pages_render_and_escape_hostile_text() {
    let srv = start();
    let pages = [
        ("/", "Overview"),
        ("/jobs", "Jobs"),
        (&format!("/jobs/{GOOD_JOB}") as &str, "class=\"strip\""),
        // the job's pass rate says which builds it covers
        (&format!("/jobs/{GOOD_JOB}") as &str, "over every stored build, 20"),
        // the job's regression window, windows only (the server reads no checkout)
        (&format!("/jobs/{GOOD_JOB}") as &str, "Which change started it"),
        (&format!("/jobs/{GOOD_JOB}") as &str, "window only: no checkout read"),
        ("/jobs", "pass rate (all stored)"),
        ("/jobs/%3Cscript%3Ealert(1)%3C%2Fscript%3E", "History"),
        ("/clusters?include=&sort=total", "Patterns"),
        ("/clusters/default/c-dns", "File an issue"),
        ("/clusters/default/c-xss", "Latest failures"),
        ("/search", "Search"),
        ("/search?q=alert&group=job", "<mark>alert</mark>"),
        ("/tests", "with runs in the window"),
        ("/tests?name=%3Cb%3Ebold%20test%3C%2Fb%3E", "&lt;b&gt;bold test&lt;/b&gt;"),
        ("/payloads", "4.22.0-0.nightly"),
        ("/reports", "Failures triage 2026-11-20"),
        ("/reports/triage/failures/2026-11-20", "Report check"),
    ];
    for (path, expect) in pages {
        let (status, ctype, body) = get(&format!("{}{path}", srv.base));
        assert_eq!(status, 200, "{path}");
        assert!(ctype.starts_with("text/html"), "{path}: {ctype}");
        assert!(body.contains(expect), "{path} lacks {expect}");
        assert!(!body.contains("<script"), "{path} carries a script element");
        assert!(!body.contains("<img"), "{path} carries an img element");
        assert!(!body.contains("<b>bold"), "{path} carries raw markup");
        assert!(!body.contains("<i>without"), "{path} carries raw markup");
    }
    let (_, _, body) = get(&format!("{}/jobs", srv.base));
    assert!(body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(body.contains("href=\"/jobs/%3Cscript%3Ealert%281%29%3C%2Fscript%3E\""));
    let (_, _, body) = get(&format!("{}/clusters", srv.base));
    assert!(body.contains("&lt;img src=x onerror=alert(2)&gt;"));
    assert!(body.contains("1 failures (0 today)"));
    // The differing span of the DNS failure is marked.
    assert!(body.contains("dial tcp <mark class=\"var\">10.0.0.1:53</mark>: i/o timeout"), "spans not marked");
    assert!(body.contains("<svg class=\"spark\""));
    assert!(body.contains("href=\"/clusters/default/c-dns\""));
    let (_, _, body) = get(&format!("{}/clusters/default/c-dns", srv.base));
    assert!(body.contains("https://github.com/kubernetes/kubernetes/issues/new?title=Failure%20cluster%20c-dns"));
    assert!(body.contains("https://github.com/kubernetes/kubernetes/issues?q=is%3Aissue%20c-dns%20OR%20k-c-dns"));
    assert!(body.contains("<svg class=\"chart\""));
    assert!(body.contains(&format!("https://prow.k8s.io/view/gs/kubernetes-ci-logs/logs/{GOOD_JOB}/101")));
    // The hierarchy: sub-patterns by template, job family and signature, escaped.
    assert!(body.contains("<h2>Sub-patterns</h2>"));
    for h in ["By template (1)", "By job family (1)", "By signature (1)"] {
        assert!(body.contains(h), "{h}");
    }
    assert!(body.contains("&lt;script&gt;family&lt;/script&gt;") && !body.contains("<script>family"));
    assert!(body.contains("Drift: <b>"));
    // Pattern drift between two dates, as a page and as JSON.
    let (status, v) = get_json(&format!("{}/api/v1/drift?all=1", srv.base));
    assert_eq!(status, 200);
    let ids: Vec<&str> = v["patterns"].as_array().unwrap().iter().map(|p| p["stable_id"].as_str().unwrap()).collect();
    assert!(ids.contains(&"c-dns"), "{v}");
    assert!(v["patterns"][0]["per_day"].as_array().is_some());
    let (status, _, body) = get(&format!("{}/drift?all=1&span=3", srv.base));
    assert_eq!(status, 200);
    assert!(body.contains("href=\"/clusters/default/c-dns\""));
    let (status, _) = get_json(&format!("{}/api/v1/drift?from=yesterday", srv.base));
    assert_eq!(status, 400);
    let (_, _, body) = get(&format!("{}/jobs/{GOOD_JOB}", srv.base));
    assert!(body.contains("<svg class=\"chart\""));
    assert_eq!(body.matches("class=\"cell ").count(), 6);
    assert_eq!(body.matches("class=\"cell flake\"").count(), 1);
    assert!(body.contains("in-run-retry"));
    assert!(body.contains("<a href=\"/tests?name=%5Bsig-network%5D%20DNS%20resolves\">"));
    // The report: Markdown rendered, raw HTML as text, findings linked to their line.
    let (_, _, body) = get(&format!("{}/reports/triage/failures/2026-11-20", srv.base));
    assert!(body.contains("&lt;script&gt;alert(3)&lt;/script&gt;"));
    assert!(body.contains("<a href=\"#L7\">7</a>"));
    assert!(body.contains("<a id=\"L7\"></a>"));
    assert!(body.contains("claim &lt;i&gt;without&lt;/i&gt; evidence"));
    // Filters are echoed into the form, escaped.
    let (_, _, body) = get(&format!("{}/clusters?include=%22%3E%3Cscript%3E", srv.base));
    assert!(body.contains("value=\"&quot;&gt;&lt;script&gt;\""));
}

#[test]
fn payload_page_is_the_stored_report_with_navigation() {
    let srv = start();
    let client: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let mut res = client.get(&format!("{}/payloads/{PAYLOAD_TAG}", srv.base)).call().expect("payload page");
    assert_eq!(res.status().as_u16(), 200);
    let csp = res.headers().get("content-security-policy").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    assert!(csp.contains("style-src 'unsafe-inline'") && csp.contains("default-src 'none'"), "{csp}");
    assert!(!csp.contains("script-src"), "{csp}");
    let body = res.body_mut().read_to_string().expect("body");
    assert!(body.contains("<h1>Payload analysis</h1>"));
    assert!(body.contains("href=\"/payloads\""));
    let (status, _, _) = get(&format!("{}/payloads/4.22.0-nope", srv.base));
    assert_eq!(status, 404);
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
    // A readable message box, and the form with the user's input kept to fix it in place.
    assert!(body.contains("class=\"alert\""), "{body}");
    assert!(!body.contains("class=\"error\""), "the strip's error colour is not a message style");
    assert!(body.contains("<form class=\"filters\" method=\"get\" action=\"/search\">"), "{body}");
    assert!(body.contains("name=\"q\" value=\"(\""), "the bad regex is kept in its box");
    let (status, _, body) = get(&format!("{}/clusters?include=%5Bx", srv.base));
    assert_eq!(status, 400);
    assert!(body.contains("class=\"alert\"") && body.contains("name=\"include\" value=\"[x\""), "{body}");
    let (status, _, body) = get(&format!("{}/jobs?re=%28", srv.base));
    assert_eq!(status, 400);
    assert!(body.contains("class=\"alert\"") && body.contains("name=\"re\" value=\"(\""), "{body}");
    // An unknown job: the message, then the jobs whose names contain it.
    let (_, _, body) = get(&format!("{}/jobs/no-such-job", srv.base));
    assert!(body.contains("class=\"alert\"") && body.contains("action=\"/jobs\""), "{body}");
    // Paths that look like files outside the store are just unknown pages.
    for path in ["/static/..%2F..%2FCargo.toml", "/reports/triage/..%2F..%2F..%2Fetc%2Fpasswd", "/static/../Cargo.toml"]
    {
        let (status, _, body) = get(&format!("{}{path}", srv.base));
        assert_eq!(status, 404, "{path}");
        assert!(!body.contains("[package]") && !body.contains("root:"), "{path}");
    }
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

/// A raw HTTP/1.1 GET with extra header lines; returns the status, the response
/// head and the body bytes.
fn raw_get(base: &str, path: &str, extra: &str) -> (u16, String, Vec<u8>) {
    let addr = base.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    let host = if extra.to_ascii_lowercase().contains("host:") { String::new() } else { format!("Host: {addr}\r\n") };
    write!(s, "GET {path} HTTP/1.1\r\n{host}{extra}Connection: close\r\n\r\n").expect("write");
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).expect("read");
    let split = buf.windows(4).position(|w| w == b"\r\n\r\n").expect("head") + 4;
    let head = String::from_utf8_lossy(&buf[..split]).into_owned();
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, head, buf[split..].to_vec())
}

fn header_value(head: &str, name: &str) -> Option<String> {
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim().to_string())
    })
}

#[test]
fn responses_are_gzipped_when_asked() {
    let srv = start();
    let (_, head, body) = raw_get(&srv.base, "/api/v1/overview", "Accept-Encoding: gzip\r\n");
    assert_eq!(header_value(&head, "content-encoding").as_deref(), Some("gzip"), "{head}");
    // Chunked or not, a gzip member starts with its magic number somewhere early.
    assert!(body.windows(2).take(16).any(|w| w == [0x1f, 0x8b]), "no gzip magic");
    let (_, head, _) = raw_get(&srv.base, "/static/style.css", "Accept-Encoding: gzip\r\n");
    assert_eq!(header_value(&head, "content-encoding").as_deref(), Some("gzip"), "{head}");
    // Without asking, plain text (the cache keeps the two apart).
    let (_, head, body) = raw_get(&srv.base, "/api/v1/overview", "");
    assert_eq!(header_value(&head, "content-encoding"), None, "{head}");
    assert!(body.contains(&b'{'));
}

#[test]
fn etags_answer_conditional_requests_with_304() {
    let srv = start();
    let (status, head, body) = raw_get(&srv.base, "/clusters", "");
    assert_eq!(status, 200);
    let etag = header_value(&head, "etag").expect("etag");
    let (status, head2, body2) = raw_get(&srv.base, "/clusters", "");
    assert_eq!((status, header_value(&head2, "etag")), (200, Some(etag.clone())), "same content, same tag");
    assert_eq!(body, body2);
    let (status, head3, body3) = raw_get(&srv.base, "/clusters", &format!("If-None-Match: {etag}\r\n"));
    assert_eq!(status, 304, "{head3}");
    assert!(body3.is_empty());
    let (status, _, _) = raw_get(&srv.base, "/clusters", "If-None-Match: W/\"0000\"\r\n");
    assert_eq!(status, 200);
    // Another page has another tag.
    let (_, head4, _) = raw_get(&srv.base, "/jobs", "");
    assert_ne!(header_value(&head4, "etag"), Some(etag));
}

#[test]
fn pages_are_rendered_ahead_into_the_cache() {
    let srv = start();
    let status = |srv: &common::Running| get_json(&format!("{}/api/v1/status", srv.base)).1;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while status(&srv)["prewarmed"] != true {
        assert!(std::time::Instant::now() < deadline, "never prewarmed: {}", status(&srv));
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let before = status(&srv)["cache"].clone();
    // Every job page and cluster page is there: asking for them renders nothing new.
    for path in [format!("/jobs/{GOOD_JOB}"), "/clusters/default/c-dns".into(), "/clusters".into()] {
        let (status, _, _) = raw_get(&srv.base, &path, "Accept-Encoding: gzip\r\n");
        assert_eq!(status, 200, "{path}");
    }
    let after = status(&srv)["cache"].clone();
    assert_eq!(after["misses"], before["misses"], "{before} → {after}");
    assert_eq!(after["hits"].as_u64(), before["hits"].as_u64().map(|h| h + 3), "{before} → {after}");
    // A page that was not rendered ahead is a miss, once.
    raw_get(&srv.base, "/clusters?job=gce", "Accept-Encoding: gzip\r\n");
    raw_get(&srv.base, "/clusters?job=gce", "Accept-Encoding: gzip\r\n");
    let last = status(&srv)["cache"].clone();
    assert_eq!(last["misses"].as_u64(), after["misses"].as_u64().map(|m| m + 1), "{after} → {last}");
    assert_eq!(last["hits"].as_u64(), after["hits"].as_u64().map(|h| h + 1), "{after} → {last}");
}

#[test]
fn other_hosts_are_refused() {
    let srv =
        start_with(citriage_web::ServeOptions { allow_hosts: vec!["ci-box.internal".into()], ..Default::default() });
    let port = srv.base.rsplit(':').next().unwrap_or("").to_string();
    for (host, want) in [
        ("evil.example.com", 403),
        (&format!("evil.example.com:{port}") as &str, 403),
        ("localhost.evil.example", 403),
        (&format!("localhost:{port}"), 200),
        ("127.0.0.1", 200),
        (&format!("[::1]:{port}"), 200),
        ("192.168.1.20:8080", 200),
        (&format!("ci-box.internal:{port}"), 200),
        ("CI-BOX.internal", 200),
    ] {
        let (status, _, body) = raw_get(&srv.base, "/api/v1/overview", &format!("Host: {host}\r\n"));
        assert_eq!(status, want, "{host}");
        if want == 403 {
            assert!(String::from_utf8_lossy(&body).contains("DNS-rebinding"), "{host}");
        }
    }
    assert!(citriage_web::host_allowed("[::1]", &[]));
    assert!(!citriage_web::host_allowed("[evil]:80", &[]));
    // Two Host headers, the second one foreign: refused, whichever a proxy would read.
    let (status, _, body) =
        raw_get(&srv.base, "/api/v1/overview", &format!("Host: localhost:{port}\r\nHost: evil.example.com\r\n"));
    assert_eq!(status, 400, "{}", String::from_utf8_lossy(&body));
}

#[test]
fn the_view_follows_the_store() {
    let srv = start();
    let db = srv.dir.path().join("citriage.db");
    let (_, v) = get_json(&format!("{}/api/v1/jobs", srv.base));
    assert_eq!(v.as_array().map(Vec::len), Some(2));
    // Another process adds a build of a new job.
    {
        let mut s = citriage_store::Store::open(&db).expect("store");
        let mut b = s.builds(Some(GOOD_JOB)).expect("builds").remove(0);
        b.job = "ci-added-later".into();
        b.path = "logs/ci-added-later/1".into();
        s.put_build(&b).expect("put");
    }
    // The server notices once writes pause (checks once a second); bounded wait.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let (_, v) = get_json(&format!("{}/api/v1/jobs", srv.base));
        if v.as_array().map(Vec::len) == Some(3) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the new job never appeared: {v}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let (status, _) = get_json(&format!("{}/api/v1/jobs/ci-added-later", srv.base));
    assert_eq!(status, 200);
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
    // A file that is not a store is refused with a message, not served.
    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, b"this is not an SQLite database, just text").expect("write");
    let err = citriage_web::Server::bind(junk, "127.0.0.1:0".parse().expect("addr"));
    assert!(matches!(err, Err(citriage_web::ServeError::Store(_))), "{:?}", err.err());
}

#[test]
fn concurrent_requests_all_answer_identically() {
    let srv = start();
    let urls: Vec<String> =
        ["/api/v1/overview", "/clusters", "/clusters/default/c-dns", &format!("/jobs/{GOOD_JOB}"), "/search?q=timeout"]
            .iter()
            .map(|p| format!("{}{p}", srv.base))
            .collect();
    let first: Vec<String> = urls.iter().map(|u| get(u).2).collect();
    let handles: Vec<_> = (0..24)
        .map(|i| {
            let url = urls[i % urls.len()].clone();
            std::thread::spawn(move || (i % 5, get(&url)))
        })
        .collect();
    for h in handles {
        let (k, (status, _, body)) = h.join().expect("client thread");
        assert_eq!(status, 200);
        assert_eq!(body, first[k], "answers must be deterministic");
    }
}

/// Waits until the server closes `conn` (a read gives end of file or a reset), reading
/// and keeping what it sends meanwhile; `None` when it is still open after `bound`,
/// else how long it took and what the server sent. `drip` is sent a byte every 100 ms
/// while waiting and nothing was answered yet (a client sending its headers or its
/// body a byte at a time), and `during` runs once, a moment after the start.
fn closed_within(
    conn: &mut std::net::TcpStream,
    bound: std::time::Duration,
    drip: &[u8],
    mut during: impl FnMut(),
) -> Option<(std::time::Duration, Vec<u8>)> {
    use std::time::{Duration, Instant};
    conn.set_read_timeout(Some(Duration::from_millis(100))).expect("timeout");
    let start = Instant::now();
    let mut sent = 0usize;
    let mut ran = false;
    let mut buf = [0u8; 4096];
    let mut got = Vec::new();
    while start.elapsed() < bound {
        if sent < drip.len() && got.is_empty() {
            if conn.write_all(&drip[sent..sent + 1]).is_err() {
                return Some((start.elapsed(), got));
            }
            sent += 1;
        }
        match conn.read(&mut buf) {
            Ok(0) => return Some((start.elapsed(), got)),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => return Some((start.elapsed(), got)),
        }
        if !ran && start.elapsed() > Duration::from_millis(300) {
            ran = true;
            during();
        }
    }
    None
}

#[test]
fn slow_headers_and_idle_connections_are_dropped_while_others_are_served() {
    use std::time::Duration;
    let srv = start_with(citriage_web::ServeOptions {
        header_timeout: Duration::from_secs(1),
        prewarm: false,
        ..Default::default()
    });
    let addr = srv.base.trim_start_matches("http://").to_string();
    let bound = Duration::from_secs(15);
    let served = |what: &str| {
        let (status, _, body) = get(&format!("{}/healthz", srv.base));
        assert_eq!(status, 200, "{what}: another client is not served: {body}");
    };

    // Headers a byte at a time, never finished: 600 bytes would take a minute.
    let mut drip = b"GET /api/v1/status HTTP/1.1\r\nHost: localhost\r\nX-Slow: ".to_vec();
    drip.resize(600, b'a');
    let mut slow = std::net::TcpStream::connect(&addr).expect("connect");
    let t = closed_within(&mut slow, bound, &drip, || served("while one client sends its headers slowly"));
    let (t, _) = t.expect("a client sending its headers a byte at a time was never disconnected");
    assert!(t >= Duration::from_millis(900), "disconnected after {t:?}, before the header timeout");

    // A connection opened and never used.
    let mut idle = std::net::TcpStream::connect(&addr).expect("connect");
    let t = closed_within(&mut idle, bound, b"", || served("while one client holds a silent connection"));
    t.expect("a silent connection was never closed");

    // A kept-alive connection, silent after its answer.
    let mut kept = std::net::TcpStream::connect(&addr).expect("connect");
    kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n").expect("write");
    let mut first = [0u8; 12];
    kept.read_exact(&mut first).expect("an answer");
    assert_eq!(&first, b"HTTP/1.1 200");
    let t = closed_within(&mut kept, bound, b"", || served("while one kept-alive connection idles"));
    t.expect("an idle kept-alive connection was never closed");

    // The server still serves after all that.
    served("afterwards");
}

#[test]
fn api_changes_rates_every_snapshot_job_both_ways_and_lists_failing_jobs() {
    let srv = start();
    let (status, v) = get_json(&format!("{}/api/v1/changes", srv.base));
    assert_eq!(status, 200);
    let sev = v["severity"].as_array().expect("severity");
    assert_eq!(sev.len(), 1, "one stored snapshot");
    let s = &sev[0];
    assert_eq!(s["dataset"], "failures");
    let jobs = s["jobs"].as_u64().unwrap();
    assert_eq!(jobs, 3);
    let rows = s["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 6, "every level");
    let dashboard: u64 = rows.iter().map(|r| r[1].as_u64().unwrap()).sum();
    let corrected: u64 = rows.iter().map(|r| r[2].as_u64().unwrap()).sum();
    assert_eq!((dashboard, corrected), (jobs, jobs), "each job rated once each way: {rows:?}");
    let failing = v["failing_jobs"].as_array().expect("failing jobs");
    assert_eq!(v["failing_jobs_total"].as_u64().unwrap() as usize, failing.len());
    assert!(!failing.is_empty());
    for j in failing {
        assert!(matches!(j["last_outcome"].as_str(), Some("fail" | "error")), "{j}");
    }
    assert_eq!(v["failing_blocking_total"], 0, "no build names a release-blocking board");
}

/// Sends `head` at once, then its body a byte every 100 ms; returns how long until the
/// server closed the connection and what it answered.
fn slow_body(addr: &str, head: &str, body: &[u8], during: impl FnMut()) -> Option<(std::time::Duration, String)> {
    let mut c = std::net::TcpStream::connect(addr).expect("connect");
    c.write_all(head.as_bytes()).expect("write");
    closed_within(&mut c, std::time::Duration::from_secs(15), body, during)
        .map(|(t, got)| (t, String::from_utf8_lossy(&got).into_owned()))
}

/// A raw request written at once; what the server answered before it closed.
fn raw_exchange(addr: &str, request: &[u8]) -> String {
    let mut c = std::net::TcpStream::connect(addr).expect("connect");
    c.set_read_timeout(Some(std::time::Duration::from_secs(15))).expect("timeout");
    c.write_all(request).expect("write");
    let mut got = Vec::new();
    // The server closes the connection after a 408 or 413: this read ends.
    let _ = c.read_to_end(&mut got);
    String::from_utf8_lossy(&got).into_owned()
}

#[test]
fn slow_and_oversized_bodies_are_cut_while_others_are_served() {
    use std::time::Duration;
    let dir = tempfile::tempdir().expect("tempdir");
    let db = common::fixture_store(dir.path());
    let opts = citriage_web::ServeOptions {
        body_timeout: Duration::from_secs(1),
        body_limit: 1024,
        prewarm: false,
        ..Default::default()
    };
    // A mounted router (as `serve` mounts the MCP endpoint) that reads bodies.
    let echo = axum::Router::new()
        .route("/", axum::routing::post(|body: axum::body::Bytes| async move { format!("{} bytes", body.len()) }));
    let server = citriage_web::Server::bind_with(db, "127.0.0.1:0".parse().expect("addr"), opts)
        .expect("bind")
        .mount("/echo", echo)
        .spawn()
        .expect("serve");
    let base = server.base_url();
    let addr = base.trim_start_matches("http://").to_string();
    let served = |what: &str| {
        let (status, _, body) = get(&format!("{base}/healthz"));
        assert_eq!(status, 200, "{what}: another client is not served: {body}");
    };
    let status = |answer: &str| answer.split_whitespace().nth(1).unwrap_or("").to_string();
    let closes = |answer: &str| header_value(answer, "connection").is_some_and(|v| v.eq_ignore_ascii_case("close"));
    // The security headers every answer carries, as a served route has them: the
    // guard's 408s and 413s carry the same.
    let secured = ["content-security-policy", "x-content-type-options", "referrer-policy"];
    let normal = raw_exchange(&addr, b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    let expected: Vec<String> = secured
        .iter()
        .map(|h| header_value(&normal, h).unwrap_or_else(|| panic!("a served route lacks {h}: {normal}")))
        .collect();
    assert!(expected[0].contains("default-src 'none'"), "{normal}");
    let same_headers = |what: &str, answer: &str| {
        let head = answer.split("\r\n\r\n").next().unwrap_or("");
        for (h, want) in secured.iter().zip(&expected) {
            assert_eq!(
                header_value(head, h).as_deref(),
                Some(want.as_str()),
                "{what}: {h} missing or different: {answer}"
            );
        }
    };

    // A body a byte at a time: 600 bytes would take a minute. Cut at the deadline, with
    // a 408, for a route that reads bodies and for one that needs none.
    for (what, head) in [
        ("POST /echo", "POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 600\r\n\r\n".to_string()),
        (
            "POST /admin/refresh",
            "POST /admin/refresh HTTP/1.1\r\nHost: localhost\r\nContent-Length: 600\r\n\r\n".into(),
        ),
        ("GET with a body", "GET /api/v1/status HTTP/1.1\r\nHost: localhost\r\nContent-Length: 600\r\n\r\n".into()),
        ("chunked POST", "POST /echo HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n258\r\n".into()),
    ] {
        let (t, answer) =
            slow_body(&addr, &head, &[b'a'; 600], || served(&format!("while {what} sends its body slowly")))
                .unwrap_or_else(|| panic!("{what}: a body sent a byte at a time was never cut"));
        assert_eq!(status(&answer), "408", "{what}: {answer}");
        assert!(closes(&answer), "{what}: {answer}");
        assert!(answer.contains("request body not received within 1 s"), "{what}: {answer}");
        assert!(t >= Duration::from_millis(900), "{what}: cut after {t:?}, before the deadline");
        same_headers(what, &answer);
    }

    // Larger than the cap: declared (answered before a byte of the body is read), or
    // sent in chunks without a length.
    let answer = raw_exchange(&addr, b"POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5000000\r\n\r\n");
    assert_eq!(status(&answer), "413", "{answer}");
    assert!(closes(&answer) && answer.contains("5000000 bytes is larger than the 1024-byte limit"), "{answer}");
    same_headers("declared too large", &answer);
    let mut chunked = b"POST /echo HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for _ in 0..3 {
        chunked.extend_from_slice(b"200\r\n");
        chunked.extend_from_slice(&[b'b'; 0x200]);
        chunked.extend_from_slice(b"\r\n");
    }
    let answer = raw_exchange(&addr, &chunked);
    assert_eq!(status(&answer), "413", "{answer}");
    assert!(closes(&answer) && answer.contains("larger than the 1024-byte limit"), "{answer}");
    same_headers("chunked too large", &answer);
    let answer = raw_exchange(&addr, b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2000\r\n\r\n");
    assert_eq!(status(&answer), "413", "a GET's body counts too: {answer}");
    same_headers("a GET's body too large", &answer);

    // Within the cap: the body reaches the route; a GET's is dropped and answered.
    let answer = raw_exchange(
        &addr,
        b"POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1024\r\nConnection: close\r\n\r\n"
            .iter()
            .copied()
            .chain([b'c'; 1024])
            .collect::<Vec<u8>>()
            .as_slice(),
    );
    assert_eq!(status(&answer), "200", "{answer}");
    assert!(answer.ends_with("1024 bytes"), "{answer}");
    let answer = raw_exchange(
        &addr,
        b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
    );
    assert_eq!(status(&answer), "200", "{answer}");
    served("afterwards");
}

#[test]
fn alerts_are_served_as_an_atom_feed_and_json_without_held_ones_in_the_feed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = common::fixture_store(dir.path());
    let mut store = citriage_store::Store::open(&db).unwrap();
    let alert = |key: &str, at: i64, title: &str, held: Option<&str>| citriage_store::NewAlert {
        key: key.into(),
        kind: "job-red".into(),
        change: "raised".into(),
        subject: HOSTILE_JOB.into(),
        owner: "node".into(),
        at,
        title: title.into(),
        text: format!("{title}\n- {HOSTILE_TEXT}\n"),
        body: "{}".into(),
        held: held.map(Into::into),
        evidence: vec![],
    };
    let turn = citriage_store::AlertTurn {
        as_of: 1_795_000_000,
        alerts: vec![
            alert("al-0000000000000001", 1_795_000_000, &format!("{HOSTILE_JOB} is red"), None),
            alert("al-0000000000000002", 1_795_000_100, "held back", Some("line 5: build-url")),
        ],
        ..Default::default()
    };
    store.commit_alerts(&Default::default(), &turn, "2026-11-21T00:00:00Z").unwrap().unwrap();
    drop(store);
    let srv = common::serve_store(db, dir, citriage_web::ServeOptions::default());
    let (status, ctype, body) = get(&format!("{}/alerts.atom", srv.base));
    assert_eq!(status, 200);
    assert!(ctype.starts_with("application/atom+xml"), "{ctype}");
    assert_eq!(body.matches("<entry>").count(), 1, "{body}");
    assert!(body.contains("urn:citriage:alert:al-0000000000000001") && !body.contains("held back"), "{body}");
    assert!(!body.contains("<script") && !body.contains('\u{1b}'), "{body}");
    let (status, v) = get_json(&format!("{}/api/v1/alerts", srv.base));
    assert_eq!(status, 200);
    let list = v.as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["key"], "al-0000000000000002", "newest first");
    assert_eq!(list[0]["held"], "line 5: build-url");
}

#[test]
fn a_build_only_testgrid_showed_says_what_testgrid_does_not_carry() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("citriage.db");
    let mut st = citriage_store::Store::open(&db).unwrap();
    let fail = citriage_model::build::StoredTest {
        file: String::new(),
        suite: String::new(),
        classname: String::new(),
        name: "[sig-node] pods run".into(),
        status: "failed".into(),
        duration: None,
        failure_text: Some("timed out waiting for the condition".into()),
        attempt: 0,
        informing: false,
        kettle_name: None,
    };
    st.put_build(&citriage_model::build::BuildRecord {
        bucket: "origin-ci-test".into(),
        path: "logs/ci-tg/42".into(),
        job: "ci-tg".into(),
        build_id: "42".into(),
        kind: "periodic".into(),
        pr: None,
        commit_sha: Some("abcdef012".into()),
        repo_commit: None,
        repo_version: Some("abcdef012".into()),
        repos: None,
        started: Some(common::T0),
        finished: None,
        duration: None,
        result: Some("FAILURE".into()),
        state: None,
        executor: None,
        origin: "testgrid".into(),
        problems: Vec::new(),
        complete: true,
        tests: vec![fail],
        artifacts: Vec::new(),
        excerpts: Vec::new(),
        kettle: None,
        testgrid: Some(citriage_model::build::TestgridPlace {
            dashboards: vec!["dash".into()],
            tab: Some("tab-a".into()),
        }),
        versions: Vec::new(),
    })
    .unwrap();
    drop(st);
    let s = common::serve_store(db, dir, citriage_web::ServeOptions::default());
    let (status, _, body) = common::get(&format!("{}/builds/ci-tg/42", s.base));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Shown by TestGrid only (tab tab-a of dashboard dash)"), "{body}");
    assert!(body.contains("Not known: TestGrid does not carry build logs."), "{body}");
    assert!(
        !body.contains("only failed builds&#39; logs are read") && !body.contains("only failed builds' logs are read")
    );
    assert!(body.contains("timed out waiting for the condition"));
}
