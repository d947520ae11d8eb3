//! Triage records over a synthetic world grown day by day, through the use cases the
//! front ends call: every evening the world's builds of that day are clustered, the
//! issue and the pull request of each planted fix are linked by hand the day they
//! opened, the records are refreshed with GitHub answering as of that evening (a
//! GitHub-shaped server on 127.0.0.1), and the day's triage report is written. The
//! records reach the states the world's truth expects on the days it expects, and the
//! report's banner and Tier 0 say exactly what the records say. The timeline is
//! printed (`cargo test -p citriage-app --test records_world -- --nocapture`).
//! Also: bad input (an unknown pattern, a 404, a pull request closed unmerged) gets a
//! clear message and a recorded state; four workers linking at once lose nothing; a
//! `watch` tick refreshes the records.

use citriage_app::records::{self, GithubAccess, LinkOptions, ListOptions, RefreshOptions, UnlinkOptions};
use citriage_app::Silent;
use citriage_model::time::{utc, DAY};
use citriage_model::Day;
use citriage_store::Store;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

mod common;

use common::{as_of, json, time};

/// `/repos/o/r/{issues,pulls}/N` from the world's `github/api/repos/...` as of `now`.
struct Github {
    server: Arc<tiny_http::Server>,
    base: String,
    now: Arc<AtomicI64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Github {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(root: &Path) -> Github {
    let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("bind"));
    let base = format!("http://127.0.0.1:{}", server.server_addr().to_ip().unwrap().port());
    let now = Arc::new(AtomicI64::new(0));
    let (srv, root, clock) = (server.clone(), root.to_path_buf(), now.clone());
    let thread = std::thread::spawn(move || {
        for rq in srv.incoming_requests() {
            let path = rq.url().split('?').next().unwrap_or("").to_string();
            let file = path.strip_prefix("/repos/").map(|rest| root.join("github/api/repos").join(rest));
            let body = file
                .filter(|f| f.is_file() && !path.contains(".."))
                .and_then(|f| as_of(json(&f), clock.load(Ordering::SeqCst)));
            let (status, body) = match body {
                Some(v) => (200, v.to_string()),
                None => (404, r#"{"message":"Not Found"}"#.to_string()),
            };
            let _ = rq.respond(tiny_http::Response::from_data(body.into_bytes()).with_status_code(status));
        }
    });
    Github { server, base, now, thread: Some(thread) }
}

fn world(dir: &Path) -> PathBuf {
    let root = dir.join("world");
    let mut p = citriage_synth::SynthParams::preset("tiny").unwrap();
    p.jobs = 4;
    p.payloads = 0;
    p.fix_stories = true;
    citriage_synth::generate(&p, &root, &mut |_| {}).unwrap();
    root
}

/// Stores the builds of the fix stories' jobs.
fn fetch(store: &mut Store, root: &Path, jobs: Vec<String>) {
    let req = citriage_app::fetch::FetchRequest {
        mirror: Some(root.join("gcs/kubernetes-ci-logs")),
        jobs,
        ..Default::default()
    };
    let src = citriage_app::fetch::source(&req).unwrap();
    citriage_app::fetch::fetch(store, src.as_ref(), &req, &Silent).unwrap().outcome().unwrap();
}

fn cluster(store: &mut Store, day: Day) {
    let opts =
        citriage_app::cluster::ClusterOptions { window_days: 40, as_of: Some(day.to_string()), ..Default::default() };
    citriage_app::cluster::cluster_store(store, &opts, &Silent).unwrap();
}

/// The stable id of the pattern whose text carries `signature`.
fn pattern_of(store: &Store, signature: &str) -> Option<String> {
    store.clusters("default").unwrap().into_iter().find(|c| c.text.contains(signature)).map(|c| c.stable_id)
}

/// The banner and the Tier 0 rows of a report.
fn banner_and_tier0(md: &str) -> (String, Vec<String>) {
    let banner = md.lines().find(|l| l.starts_with("> ⚠️ **Status banner**")).unwrap_or("").to_string();
    let tier0 = md
        .split("### 🟢 Tier 0")
        .nth(1)
        .and_then(|s| s.split("\n### ").next())
        .unwrap_or("")
        .lines()
        .filter(|l| l.starts_with("| 0."))
        .map(str::to_string)
        .collect();
    (banner, tier0)
}

#[test]
fn records_of_a_grown_world_follow_its_truth_and_the_daily_report_agrees_with_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = world(dir.path());
    let truth = json(&root.join("truth.json"));
    let gh = serve(&root);
    let access = GithubAccess { api: gh.base.clone(), offline: false };
    let mut store = Store::open(&dir.path().join("store.db")).unwrap();
    let stories = truth["fixes"].as_array().unwrap().clone();
    let jobs: Vec<String> = stories
        .iter()
        .flat_map(|s| s["jobs"].as_array().unwrap().iter().map(|j| j["name"].as_str().unwrap().to_string()))
        .collect();
    fetch(&mut store, &root, jobs);
    let (first, last) = (
        Day::parse(truth["world"]["start_date"].as_str().unwrap()).unwrap().0,
        Day::parse(truth["world"]["end_date"].as_str().unwrap()).unwrap().0,
    );
    let snapshot = root.join("k8s-metrics/failures-latest.json");
    let mut linked: Vec<String> = Vec::new();
    let mut subjects: Vec<(String, String)> = Vec::new();
    let mut confirmed_seen = 0;
    let mut failed_seen = 0;
    for d in first..=last {
        let evening = (d + 1) * DAY - 1;
        gh.now.store(evening, Ordering::SeqCst);
        cluster(&mut store, Day(d));
        for story in &stories {
            let Some(id) = pattern_of(&store, story["signature"].as_str().unwrap()) else { continue };
            let subject = format!("pattern:default/{id}");
            if !subjects.iter().any(|s| s.1 == subject) {
                subjects.push((story["story"].as_str().unwrap().to_string(), subject.clone()));
            }
            for what in ["issue", "pull_request"] {
                let reference = story[what]["reference"].as_str().unwrap();
                if time(&story[what]["opened"]).unwrap() <= evening && !linked.iter().any(|l| l == reference) {
                    let l = records::link(
                        &mut store,
                        &LinkOptions {
                            subject: id.clone(),
                            reference: reference.into(),
                            by: "sig-lead".into(),
                            github: access.clone(),
                            at: Some(evening),
                            ..Default::default()
                        },
                        &Silent,
                    )
                    .unwrap();
                    l.outcome().unwrap();
                    assert_eq!(l.subject, subject);
                    linked.push(reference.to_string());
                }
            }
        }
        let r = records::refresh(
            &mut store,
            &RefreshOptions { github: Some(access.clone()), as_of: Some(evening), ..Default::default() },
            &Silent,
        )
        .unwrap();
        assert!(r.unread.is_empty(), "{:?}", r.unread);
        // The day's report.
        let out = dir.path().join(format!("report-{}", Day(d)));
        let req = citriage_app::triage::TriageRequest {
            snapshot: Some(snapshot.display().to_string()),
            date: Some(Day(d)),
            out: out.clone(),
            api: gh.base.clone(),
            ..Default::default()
        };
        let reopened = Store::open(&dir.path().join("store.db")).unwrap();
        citriage_app::triage::triage_snapshot(reopened, &req, &Default::default(), &Silent).unwrap();
        let md = std::fs::read_to_string(out.join("report.md")).unwrap();
        let (banner, tier0) = banner_and_tier0(&md);
        // What the records say as of that evening.
        let recs = store.records(None).unwrap();
        let in_state = |s: &str, after: i64| -> Vec<String> {
            recs.iter()
                .filter(|r| r.state == s && r.since > after && r.since <= evening)
                .map(|r| r.subject.clone())
                .collect()
        };
        let failed = in_state("failed-after-fix", i64::MIN);
        let confirmed = in_state("fix-confirmed", if d == first { i64::MIN } else { evening - DAY });
        let awaiting = in_state("fix-merged", i64::MIN);
        let rows = |mark: &str| -> Vec<&String> { tier0.iter().filter(|l| l.contains(mark)).collect() };
        for (mark, want) in
            [("🔴 FAILED AFTER FIX", &failed), ("✅ FIX CONFIRMED", &confirmed), ("⏳ MERGED", &awaiting)]
        {
            let got = rows(mark);
            assert_eq!(got.len(), want.len(), "{}: {mark}: {tier0:?} vs {want:?}", Day(d));
            for s in want {
                assert!(got.iter().any(|l| l.contains(s.as_str())), "{}: {s} missing from Tier 0: {tier0:?}", Day(d));
            }
        }
        // Failed fixes lead Tier 0 and the banner.
        if !failed.is_empty() {
            assert!(tier0[0].contains("🔴 FAILED AFTER FIX"), "{tier0:?}");
            let lead = banner.split("**Status banner**: ").nth(1).unwrap_or("");
            assert!(lead.starts_with(&format!("{} FAILED AFTER FIX", plural(failed.len()))), "{banner}");
            failed_seen += 1;
        } else {
            assert!(!banner.contains("FAILED AFTER FIX"), "{}: {banner}", Day(d));
        }
        for (n, what) in [(confirmed.len(), "confirmed"), (awaiting.len(), "merged, awaiting confirmation")] {
            let sentence = format!("{} {what}", plural(n));
            assert_eq!(banner.contains(&sentence), n > 0, "{}: {sentence:?} in {banner}", Day(d));
        }
        confirmed_seen += confirmed.len();
    }
    assert_eq!(confirmed_seen, 1, "the one fix that works is confirmed on one day's report");
    assert!(failed_seen > 0);
    // The timeline, and the states on the days the truth expects.
    for (kind, subject) in &subjects {
        let story = stories.iter().find(|s| s["story"] == kind.as_str()).unwrap();
        println!("\n{kind}: {subject} ({})", story["test"].as_str().unwrap());
        let ts = store.record_transitions(subject).unwrap();
        for t in &ts {
            println!("  {}  {:<16} → {:<16} {}", utc(t.at), t.from, t.to, t.reason);
        }
        let got: Vec<(String, String, Option<i64>)> = ts
            .iter()
            .zip(story["expected"].as_array().unwrap().iter().map(Some).chain(std::iter::repeat(None)))
            .map(|(t, e)| {
                (t.to.clone(), Day::from_unix_seconds(t.at).to_string(), e.and_then(|e| e.get("at")).map(|_| t.at))
            })
            .collect();
        let want: Vec<(String, String, Option<i64>)> = story["expected"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (e["state"].as_str().unwrap().into(), e["day"].as_str().unwrap().into(), e.get("at").and_then(time))
            })
            .collect();
        assert_eq!(got, want, "{kind}");
        for t in &ts {
            for id in &t.evidence {
                assert!(store.evidence(id).unwrap().is_some(), "{subject}: evidence {id} resolves in the ledger");
            }
        }
    }
    assert_eq!(subjects.len(), 3, "{subjects:?}");
    // The list puts failed fixes first.
    let listed = records::list(&store, &ListOptions::default()).unwrap();
    assert_eq!(listed.len(), 3);
    assert_eq!(listed[0].record.state, "failed-after-fix");
    assert_eq!(listed[2].record.state, "fix-confirmed");
}

#[test]
fn bad_links_get_a_clear_message_and_a_recorded_state_and_racing_writers_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = world(dir.path());
    let issues = root.join("github/api/repos/kubernetes/kubernetes/issues");
    // A pull request closed without merging, beside the world's.
    std::fs::write(
        issues.join("999001"),
        serde_json::json!({"number": 999001, "title": "Try to fix the rollover", "state": "closed", "body": "",
            "created_at": "2026-01-01T00:00:00Z", "closed_at": "2026-01-02T00:00:00Z", "labels": [],
            "pull_request": {"url": "x", "merged_at": null}})
        .to_string(),
    )
    .unwrap();
    let truth = json(&root.join("truth.json"));
    let story = truth["fixes"].as_array().unwrap().iter().find(|s| s["story"] == "works").unwrap().clone();
    let gh = serve(&root);
    let end = time(&truth["world"]["world_end"]).unwrap();
    gh.now.store(end, Ordering::SeqCst);
    let access = GithubAccess { api: gh.base.clone(), offline: false };
    let path = dir.path().join("store.db");
    let mut store = Store::open(&path).unwrap();
    let link = |store: &mut Store, subject: &str, reference: &str| {
        let opts = LinkOptions {
            subject: subject.into(),
            reference: reference.into(),
            by: "sig-lead".into(),
            github: access.clone(),
            at: Some(end),
            ..Default::default()
        };
        records::link(store, &opts, &Silent)
    };
    // No clustering yet: the pattern id is not stored.
    let e = link(&mut store, "c0ffee00c0ffee", "kubernetes/kubernetes#1").unwrap_err();
    assert!(e.is_bad_input() && e.to_string().contains("pattern c0ffee00c0ffee is not stored"), "{e}");
    assert!(e.to_string().contains("`citriage cluster`"), "{e}");
    let jobs = story["jobs"].as_array().unwrap().iter().map(|j| j["name"].as_str().unwrap().to_string()).collect();
    fetch(&mut store, &root, jobs);
    cluster(&mut store, Day::from_unix_seconds(end));
    let id = pattern_of(&store, story["signature"].as_str().unwrap()).unwrap();
    let subject = format!("pattern:default/{id}");
    for bad in ["kubernetes#5", "pattern:default/", "job:"] {
        let e =
            link(&mut store, if bad.contains(':') { bad } else { &id }, if bad.contains(':') { "o/r#1" } else { bad })
                .unwrap_err();
        assert!(e.is_bad_input(), "{bad}: {e}");
    }
    // A reference that does not exist: linked, kept, shown, not counted; the command fails.
    let l = link(&mut store, &id, "kubernetes/kubernetes#999999").unwrap();
    let e = l.outcome().unwrap_err();
    assert!(e.is_bad_input() && e.to_string().contains("GitHub answered 404"), "{e}");
    assert_eq!(l.record.record.state, "new", "a 404 does not triage");
    assert_eq!(l.record.links[0].facts.ref_state, "not-found");
    // A pull request closed without merging: triage, never a fix.
    let l = link(&mut store, &id, "https://github.com/kubernetes/kubernetes/pull/999001").unwrap();
    assert!(l.outcome().unwrap_err().to_string().contains("closed without merging"));
    assert_eq!(l.record.record.state, "triaged");
    assert_eq!(l.reference, "kubernetes/kubernetes#999001");
    // Unlinking what is not linked says so; unlinking moves the state back.
    let un = |store: &mut Store, reference: &str| {
        let opts =
            UnlinkOptions { subject: id.clone(), reference: reference.into(), by: "sig-lead".into(), at: Some(end) };
        records::unlink(store, &opts, &Silent)
    };
    let e = un(&mut store, "kubernetes/kubernetes#5").unwrap_err();
    assert!(e.is_bad_input() && e.to_string().contains("is not linked to"), "{e}");
    let u = un(&mut store, "kubernetes/kubernetes#999001").unwrap();
    assert_eq!(u.record.record.state, "new");
    assert!(u.record.links.iter().all(|l| l.reference != "kubernetes/kubernetes#999001" || !l.active()));
    // The fix linked on the day it merged, by four workers at once, each refreshing too:
    // one link is made, each transition is kept once and starts where the previous ended.
    let pr = story["pull_request"]["reference"].as_str().unwrap().to_string();
    let merged = time(&story["merged_at"]).unwrap();
    let before = store.record_transitions(&subject).unwrap().len();
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let (path, id, pr, access) = (path.clone(), id.clone(), pr.clone(), access.clone());
            std::thread::spawn(move || {
                let mut s = Store::open(&path).unwrap();
                let opts = LinkOptions {
                    subject: id,
                    reference: pr,
                    by: "sig-lead".into(),
                    github: access,
                    at: Some(merged),
                    ..Default::default()
                };
                let l = records::link(&mut s, &opts, &Silent).unwrap();
                records::refresh(&mut s, &RefreshOptions { as_of: Some(end), ..Default::default() }, &Silent).unwrap();
                l.action
            })
        })
        .collect();
    let actions: Vec<String> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    assert_eq!(actions.iter().filter(|a| *a == "linked").count(), 1, "{actions:?}");
    let ts = store.record_transitions(&subject).unwrap();
    assert!(ts.len() > before, "{ts:?}");
    for w in ts.windows(2) {
        assert_eq!(w[0].to, w[1].from, "{ts:?}");
        assert_eq!(w[0].seq + 1, w[1].seq);
    }
    assert_eq!(ts.iter().filter(|t| t.to == "fix-confirmed").count(), 1, "{ts:?}");
    assert_eq!(store.record(&subject).unwrap().unwrap().state, "fix-confirmed");
}

fn plural(n: usize) -> String {
    format!("{n} {}", if n == 1 { "fix" } else { "fixes" })
}

#[test]
fn a_watch_tick_refreshes_the_records() {
    let dir = tempfile::tempdir().unwrap();
    let root = world(dir.path());
    let truth = json(&root.join("truth.json"));
    let story = truth["fixes"].as_array().unwrap().iter().find(|s| s["story"] == "works").unwrap().clone();
    let jobs: Vec<String> =
        story["jobs"].as_array().unwrap().iter().map(|j| j["name"].as_str().unwrap().into()).collect();
    let gh = serve(&root);
    let merged = time(&story["merged_at"]).unwrap();
    gh.now.store(merged + 60, Ordering::SeqCst);
    let path = dir.path().join("store.db");
    let mut store = Store::open(&path).unwrap();
    fetch(&mut store, &root, jobs.clone());
    cluster(&mut store, Day::from_unix_seconds(time(&truth["world"]["world_end"]).unwrap()));
    let id = pattern_of(&store, story["signature"].as_str().unwrap()).unwrap();
    let opts = LinkOptions {
        subject: id.clone(),
        reference: story["pull_request"]["reference"].as_str().unwrap().into(),
        by: "sig-lead".into(),
        github: GithubAccess { api: gh.base.clone(), offline: false },
        at: Some(merged + 60),
        ..Default::default()
    };
    let l = records::link(&mut store, &opts, &Silent).unwrap();
    assert_eq!(l.record.record.state, "fix-merged", "as of the link, no clean run yet");
    let cfg = format!(
        "[[sources.buckets]]\nname = \"world\"\nbucket = \"kubernetes-ci-logs\"\nmirror = {:?}\njobs = {:?}\n",
        root.join("gcs/kubernetes-ci-logs").display().to_string(),
        jobs
    );
    let cfg = citriage_app::config::Config::parse(&cfg).unwrap();
    let worker = citriage_app::watch::Worker::new(
        cfg,
        "w1".into(),
        citriage_store::Location::from_path(&path),
        Arc::new(std::sync::atomic::AtomicBool::new(false)),
        Default::default(),
    )
    .unwrap();
    let report = worker.tick(&mut store, true).unwrap();
    let moved = report.records.expect("the store keeps a record");
    assert!(
        moved.iter().any(|t| t.starts_with(&format!("pattern:default/{id}: fix merged → fix confirmed"))),
        "{moved:?}"
    );
    assert_eq!(store.record(&format!("pattern:default/{id}")).unwrap().unwrap().state, "fix-confirmed");
}
