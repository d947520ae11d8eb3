//! Triage records on the dashboard over the fixture store: `/records` lists the open
//! records by state and age (failed after fix first), the pattern page shows its
//! record's links and timeline and, behind the write gate, the link form, whose POST
//! links by hand through the use case (refused without the token); `/api/v1/records`
//! answers the same as JSON; hostile CI text stays text. The job page shows a job's
//! record and the payload page its root causes' records, with their timelines. Then
//! the same pages in
//! headless Chromium (skipped, with the reason printed, when it is not installed),
//! screenshots kept in `CITRIAGE_WEB_SCREENSHOTS` when set.

mod common;
mod webdriver;

use citriage_model::{Evidence, EvidenceKind};
use citriage_store::{LinkSource, NewLink, NewTransition, RefFacts, Store, Subject};
use common::{fixture_store, get, get_json, serve_store, Running, GOOD_JOB, HOSTILE_TEXT, PAYLOAD_TAG, T0};
use std::time::Duration;

const TOKEN: &str = "s3cret-token";

fn link(s: &mut Store, subject: &str, reference: &str, kind: &str, state: &str, merged: Option<i64>, at: i64) {
    let facts = RefFacts {
        ref_kind: kind.into(),
        ref_state: state.into(),
        merged_at: merged,
        merge_commit: merged.map(|_| "c129a3cc8bc2aa".into()),
        base_branch: merged.map(|_| "master".into()),
        read_at: Some(at),
    };
    let l = NewLink {
        reference: reference.into(),
        source: LinkSource::Hand,
        linked_by: "sig-lead".into(),
        linked_at: at,
        facts,
        note: String::new(),
    };
    s.link_record(subject, &l).unwrap();
}

fn step(s: &mut Store, subject: &str, from: &str, to: &str, at: i64, why: &str) {
    let v = s.record(subject).unwrap().unwrap().version;
    let ev = Evidence::new(EvidenceKind::BuildResult, format!("{subject} {to}"), why, "", "2026-11-20");
    let t = NewTransition { from: from.into(), to: to.into(), at, evidence: vec![ev], reason: why.into() };
    s.apply_record_transitions(subject, v, &[t], at).unwrap();
}

/// The fixture store with two records: the DNS pattern failed after its fix, the
/// hostile pattern triaged.
fn server() -> Running {
    let dir = tempfile::tempdir().unwrap();
    let db = fixture_store(dir.path());
    let mut s = Store::open(&db).unwrap();
    let dns = Subject::Pattern { profile: "default".into(), id: "c-dns".into() };
    let xss = Subject::Pattern { profile: "default".into(), id: "c-xss".into() };
    s.ensure_record(&dns, "dial tcp 10.0.0.1:53: i/o timeout", T0).unwrap();
    s.ensure_record(&xss, HOSTILE_TEXT, T0).unwrap();
    let (d, x) = (dns.key(), xss.key());
    link(&mut s, &d, "kubernetes/kubernetes#5001", "pr", "merged", Some(T0 + 7_200), T0 + 3_600);
    step(&mut s, &d, "new", "triaged", T0 + 3_600, "pull request kubernetes/kubernetes#5001 linked");
    step(&mut s, &d, "triaged", "fix-merged", T0 + 7_200, "pull request kubernetes/kubernetes#5001 merged");
    step(
        &mut s,
        &d,
        "fix-merged",
        "failed-after-fix",
        T0 + 43_200,
        "ci-kubernetes-e2e-gce/101 failed with the pattern after the fix merged",
    );
    link(&mut s, &x, "kubernetes/kubernetes#5002", "issue", "open", None, T0 + 100);
    step(&mut s, &x, "new", "triaged", T0 + 100, "issue <b>kubernetes/kubernetes#5002</b> linked");
    drop(s);
    let opts = citriage_web::ServeOptions {
        writes: citriage_web::ops::WriteGate { token: Some(TOKEN.into()), trusted_header: None },
        // GitHub unreachable: a hand link is kept with its state unread.
        github_api: "http://127.0.0.1:9".into(),
        ..Default::default()
    };
    serve_store(db, dir, opts)
}

fn post(url: &str, body: &str, token: Option<&str>) -> (u16, String) {
    post_from(url, body, token, None)
}

fn post_from(url: &str, body: &str, token: Option<&str>, origin: Option<&str>) -> (u16, String) {
    let client: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let mut rq = client.post(url).header("content-type", "application/x-www-form-urlencoded");
    if let Some(o) = origin {
        rq = rq.header("origin", o);
    }
    if let Some(t) = token {
        rq = rq.header("authorization", &format!("Bearer {t}"));
    }
    let mut res = rq.send(body).expect("request");
    (res.status().as_u16(), res.body_mut().read_to_string().unwrap_or_default())
}

#[test]
fn records_pages_list_show_and_link_behind_the_write_gate() {
    let srv = server();
    let (status, _, page) = get(&format!("{}/records", srv.base));
    assert_eq!(status, 200);
    let failed = page.find("pattern:default/c-dns").expect("the failed fix is listed");
    let triaged = page.find("pattern:default/c-xss").expect("the triaged record is listed");
    assert!(failed < triaged, "failed after fix comes first");
    assert!(page.contains("2 open record(s) · 1 failed after fix · 1 triaged"), "{page}");
    assert!(!page.contains("<script>alert(\"xss\")"), "CI text is escaped");
    assert!(page.contains("href=\"/clusters/default/c-dns\""));
    // The pattern page: state, links, timeline, and the form (writes are open).
    let (status, _, page) = get(&format!("{}/clusters/default/c-dns", srv.base));
    assert_eq!(status, 200);
    assert!(page.contains("<section class=\"record\" id=\"record\">"), "{page}");
    assert!(page.contains("failed after fix") && page.contains("kubernetes/kubernetes#5001"), "{page}");
    assert_eq!(page.matches("<li><b>").count(), 3, "three transitions in the timeline");
    assert!(page.contains("action=\"/records/link\""));
    let (_, _, page) = get(&format!("{}/clusters/default/c-xss", srv.base));
    assert!(page.contains("issue &lt;b&gt;kubernetes/kubernetes#5002&lt;/b&gt; linked"), "reasons escaped");
    // JSON.
    let (status, v) = get_json(&format!("{}/api/v1/records", srv.base));
    assert_eq!(status, 200);
    let states: Vec<&str> = v.as_array().unwrap().iter().map(|r| r["state"].as_str().unwrap()).collect();
    assert_eq!(states, ["failed-after-fix", "triaged"]);
    let (_, v) = get_json(&format!("{}/api/v1/records?subject=pattern%3Adefault%2Fc-dns", srv.base));
    assert_eq!(v["transitions"].as_array().unwrap().len(), 3);
    let (status, v) = get_json(&format!("{}/api/v1/records?state=bogus", srv.base));
    assert_eq!(status, 400, "{v}");
    let (status, _) = get_json(&format!("{}/api/v1/records?subject=nope", srv.base));
    assert_eq!(status, 400, "an unknown pattern is bad input");
    // The form's POST: refused without the token, done with it.
    let body = "subject=pattern%3Adefault%2Fc-xss&reference=kubernetes%2Fkubernetes%235003&by=alice";
    assert_eq!(post(&format!("{}/records/link", srv.base), body, None).0, 401);
    assert_eq!(post(&format!("{}/records/link", srv.base), body, Some("wrong")).0, 401);
    let (status, _) = post_from(&format!("{}/records/link", srv.base), body, Some(TOKEN), Some("https://evil.example"));
    assert_eq!(status, 403, "a form posted from another site");
    let (status, page) = post_from(&format!("{}/records/link", srv.base), body, Some(TOKEN), Some(&srv.base));
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("linked kubernetes/kubernetes#5003"), "{page}");
    let (_, v) = get_json(&format!("{}/api/v1/records?subject=pattern:default/c-xss", srv.base));
    let links = v["links"].as_array().unwrap();
    let made = links.iter().find(|l| l["reference"] == "kubernetes/kubernetes#5003").expect("linked");
    assert_eq!(made["linked_by"], "alice");
    assert_eq!(made["ref_state"], "unknown", "GitHub unreachable: kept, state not read");
    let (_, _, page) = get(&format!("{}/clusters/default/c-xss", srv.base));
    assert!(page.contains("kubernetes/kubernetes#5003"), "the pattern page shows the new link at once");
    let (status, page) = post(
        &format!("{}/records/link", srv.base),
        "subject=c-nope&reference=kubernetes%2Fkubernetes%231",
        Some(TOKEN),
    );
    assert_eq!(status, 400);
    assert!(page.contains("pattern c-nope is not stored"), "{page}");
}

/// The fixture store with a record of a job and one of a payload root cause; writes
/// closed.
fn job_and_payload_server() -> Running {
    let dir = tempfile::tempdir().unwrap();
    let db = fixture_store(dir.path());
    let mut s = Store::open(&db).unwrap();
    let job = Subject::Job { job: GOOD_JOB.into() };
    let cause = Subject::Payload { cause: format!("{PAYLOAD_TAG}/RC1") };
    s.ensure_record(&job, GOOD_JOB, T0).unwrap();
    s.ensure_record(&cause, "kube-apiserver crashloops", T0).unwrap();
    let (j, c) = (job.key(), cause.key());
    link(&mut s, &j, "kubernetes/kubernetes#6001", "issue", "open", None, T0 + 600);
    step(&mut s, &j, "new", "triaged", T0 + 600, "issue kubernetes/kubernetes#6001 linked");
    link(&mut s, &c, "openshift/origin#7001", "pr", "merged", Some(T0 + 9_000), T0 + 900);
    step(&mut s, &c, "new", "triaged", T0 + 900, HOSTILE_TEXT);
    step(&mut s, &c, "triaged", "fix-merged", T0 + 9_000, "pull request openshift/origin#7001 merged");
    drop(s);
    serve_store(db, dir, citriage_web::ServeOptions { github_api: "http://127.0.0.1:9".into(), ..Default::default() })
}

#[test]
fn job_and_payload_pages_show_their_records_and_timelines() {
    let srv = job_and_payload_server();
    let (status, _, page) = get(&format!("{}/jobs/{GOOD_JOB}", srv.base));
    assert_eq!(status, 200);
    let at = page.find("<section class=\"record\" id=\"record\">").expect("the job's record");
    assert!(page[at..].contains(&format!("<code>job:{GOOD_JOB}</code>")), "{page}");
    assert!(page[at..].contains("kubernetes/kubernetes#6001") && page[at..].contains("triaged"), "{page}");
    assert_eq!(page[at..].matches("<li><b>").count(), 1, "one transition in the timeline");
    assert!(!page.contains("action=\"/records/link\""), "writes are closed: no form");
    // A job without a record: no section when writes are closed.
    let (status, _, page) = get(&format!("{}/jobs/%3Cscript%3Ealert(1)%3C%2Fscript%3E", srv.base));
    assert_eq!(status, 200);
    assert!(!page.contains("<section class=\"record\""), "{page}");
    // The payload page: its root cause's record, the reasons escaped.
    let (status, _, page) = get(&format!("{}/payloads/{PAYLOAD_TAG}", srv.base));
    assert_eq!(status, 200);
    let at = page.find("<section class=\"record\" id=\"record\">").expect("the root cause's record");
    let section = &page[at..];
    assert!(section.contains(&format!("<code>payload:{PAYLOAD_TAG}/RC1</code>")), "{section}");
    assert!(section.contains("openshift/origin#7001") && section.contains("fix merged"), "{section}");
    assert_eq!(section.matches("<li><b>").count(), 2, "two transitions");
    assert!(!section.contains("<script>alert(\"xss\")"), "CI text is escaped: {section}");
    assert!(page.find("</body>").is_none_or(|end| end > at), "inside the body");
    // The pattern pages keep theirs (no record here: the message, no form).
    let (_, v) = get_json(&format!("{}/api/v1/records", srv.base));
    assert_eq!(v.as_array().unwrap().len(), 2);
}

#[test]
fn records_pages_render_in_a_browser() {
    if let Some(why) = webdriver::unavailable() {
        eprintln!("skipped: {why}");
        return;
    }
    let s = webdriver::Session::start().unwrap_or_else(|e| panic!("browser session: {e}"));
    let srv = server();
    let other = job_and_payload_server();
    let job = format!("/jobs/{GOOD_JOB}#record");
    let payload = format!("/payloads/{PAYLOAD_TAG}");
    for (base, path, name, css) in [
        (&srv.base, "/records", "records", "table.records tr.state-failed"),
        (&srv.base, "/clusters/default/c-dns#record", "record", "ol.timeline li"),
        (&other.base, job.as_str(), "job-record", "section.record ol.timeline li"),
        (&other.base, payload.as_str(), "payload-record", "section.record ol.timeline li"),
    ] {
        s.goto(&format!("{base}{path}")).unwrap();
        s.wait_for(css, Duration::from_secs(15)).unwrap_or_else(|e| panic!("{path}: {e}"));
        let problems: Vec<_> =
            s.browser_log().unwrap().into_iter().filter(|e| e.level == "SEVERE" || e.level == "WARNING").collect();
        assert!(problems.is_empty(), "{path}: {problems:?}");
        let png = s.screenshot_png().unwrap();
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{name}: not a PNG");
        if let Some(dir) = std::env::var_os("CITRIAGE_WEB_SCREENSHOTS") {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(std::path::Path::new(&dir).join(format!("{name}.png")), &png).unwrap();
        }
    }
}
