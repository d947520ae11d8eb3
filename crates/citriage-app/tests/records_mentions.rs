//! Triage records linked from GitHub cross-references alone: a synthetic world of fix
//! stories grown day by day, its builds clustered every evening and the records
//! refreshed with the search for mentions on, against a GitHub-shaped server on
//! 127.0.0.1 that answers `/repos/...` and `/search/issues` from the world's GitHub
//! files as of that evening. Nobody links anything by hand, and the records still
//! reach the states the world's truth expects on the days it expects (each issue and
//! pull request is found the evening it opened); a mention through a job name alone is
//! listed and not linked; a mention someone unlinked is not linked again; offline, the
//! same refresh answers from the store's cache without a request and says so, and a
//! search it never made is said not looked at.

use citriage_app::records::{self, GithubAccess, MentionOptions, RefreshOptions, UnlinkOptions};
use citriage_app::Silent;
use citriage_model::time::{utc, DAY};
use citriage_model::Day;
use citriage_store::{LinkSource, Store};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::Arc;

mod common;

use common::{as_of, json, time};

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap_or(b'?'));
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// GitHub's answer to a URL as of `now`: an issue or pull request, or a search over the
/// titles and bodies of the repositories' issues for the quoted phrase.
fn route(root: &Path, url: &str, now: i64) -> (u16, String) {
    let not_found = (404, r#"{"message":"Not Found"}"#.to_string());
    if let Some(q) = url.strip_prefix("/search/issues?q=") {
        let q = decode(q.split('&').next().unwrap_or(""));
        let phrase = q.split('"').nth(1).unwrap_or("").to_lowercase();
        let mut items = Vec::new();
        for repo in q.split_whitespace().filter_map(|w| w.strip_prefix("repo:")) {
            let Ok(rd) = std::fs::read_dir(root.join("github/api/repos").join(repo).join("issues")) else { continue };
            let mut files: Vec<PathBuf> = rd.map(|e| e.unwrap().path()).collect();
            files.sort();
            for f in files {
                let Some(mut v) = as_of(json(&f), now) else { continue };
                let text = format!("{} {}", v["title"].as_str().unwrap_or(""), v["body"].as_str().unwrap_or(""));
                if !phrase.is_empty() && text.to_lowercase().contains(&phrase) {
                    v["repository_url"] = format!("https://api.github.com/repos/{repo}").into();
                    items.push(v);
                }
            }
        }
        let body = serde_json::json!({"total_count": items.len(), "incomplete_results": false, "items": items});
        return (200, body.to_string());
    }
    let path = url.split('?').next().unwrap_or(url);
    let Some(rest) = path.strip_prefix("/repos/").filter(|_| !path.contains("..")) else { return not_found };
    let file = root.join("github/api/repos").join(rest);
    match file.is_file().then(|| as_of(json(&file), now)).flatten() {
        Some(v) => (200, v.to_string()),
        None => not_found,
    }
}

struct Github {
    server: Arc<tiny_http::Server>,
    base: String,
    now: Arc<AtomicI64>,
    requests: Arc<AtomicUsize>,
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
    let requests = Arc::new(AtomicUsize::new(0));
    let (srv, root, clock, count) = (server.clone(), root.to_path_buf(), now.clone(), requests.clone());
    let thread = std::thread::spawn(move || {
        for rq in srv.incoming_requests() {
            count.fetch_add(1, Ordering::SeqCst);
            let (status, body) = route(&root, rq.url(), clock.load(Ordering::SeqCst));
            let _ = rq.respond(tiny_http::Response::from_data(body.into_bytes()).with_status_code(status));
        }
    });
    Github { server, base, now, requests, thread: Some(thread) }
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

fn mentions(repo: &str) -> Option<MentionOptions> {
    Some(MentionOptions { repos: vec![repo.into()], top: 1000, ..Default::default() })
}

#[test]
fn records_linked_from_github_mentions_alone_follow_the_truth_and_refresh_offline_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let root = world(dir.path());
    let truth = json(&root.join("truth.json"));
    let gh = serve(&root);
    let online = GithubAccess { api: gh.base.clone(), offline: false };
    let mut store = Store::open(&dir.path().join("store.db")).unwrap();
    let stories = truth["fixes"].as_array().unwrap().clone();
    let jobs: Vec<String> = stories
        .iter()
        .flat_map(|s| s["jobs"].as_array().unwrap().iter().map(|j| j["name"].as_str().unwrap().to_string()))
        .collect();
    // An issue about one of the jobs that names nothing else of its patterns.
    std::fs::write(
        root.join("github/api/repos/kubernetes/kubernetes/issues/999002"),
        serde_json::json!({"number": 999002, "title": format!("{} takes too long", jobs[0]), "state": "open",
            "body": "The job's runs got slower this month.", "created_at": "2026-01-01T00:00:00Z", "labels": []})
        .to_string(),
    )
    .unwrap();
    fetch(&mut store, &root, jobs.clone());
    let (first, last) = (
        Day::parse(truth["world"]["start_date"].as_str().unwrap()).unwrap().0,
        Day::parse(truth["world"]["end_date"].as_str().unwrap()).unwrap().0,
    );
    let mut candidates = 0;
    for d in first..=last {
        let evening = (d + 1) * DAY - 1;
        gh.now.store(evening, Ordering::SeqCst);
        cluster(&mut store, Day(d));
        let opts = RefreshOptions {
            github: Some(online.clone()),
            as_of: Some(evening),
            mentions: mentions("kubernetes/kubernetes"),
            ..Default::default()
        };
        let r = records::refresh(&mut store, &opts, &Silent).unwrap();
        let m = r.mentions.as_ref().expect("the search ran");
        assert!(!m.offline && m.unanswered.is_empty(), "{}: {m:?}", Day(d));
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        candidates += m.candidates.len();
        for c in &m.candidates {
            assert!(c.contains("kubernetes/kubernetes#999002: names the job"), "{c}");
        }
    }
    assert!(candidates > 0, "the issue about a job is found through the job's name only");
    // Exactly the stories' patterns have records, linked to their own issue and pull
    // request by `github mention`, each with the query and when it was read.
    let recs = store.records(None).unwrap();
    assert_eq!(recs.len(), stories.len(), "{recs:?}");
    for story in &stories {
        let kind = story["story"].as_str().unwrap();
        let signature = story["signature"].as_str().unwrap();
        let id = store.clusters("default").unwrap().into_iter().find(|c| c.text.contains(signature)).unwrap().stable_id;
        let subject = format!("pattern:default/{id}");
        let links = store.record_links(&subject).unwrap();
        let mut refs: Vec<&str> = links.iter().map(|l| l.reference.as_str()).collect();
        refs.sort();
        let mut want =
            vec![story["issue"]["reference"].as_str().unwrap(), story["pull_request"]["reference"].as_str().unwrap()];
        want.sort();
        assert_eq!(refs, want, "{kind}");
        for l in &links {
            assert_eq!((l.source, l.linked_by.as_str()), (LinkSource::Github, "github mention"), "{kind}");
            assert!(l.note.starts_with("GitHub search \"") && l.note.contains(" read 20"), "{kind}: {}", l.note);
            assert!(l.note.contains("repo:kubernetes/kubernetes"), "{}", l.note);
        }
        println!("\n{kind}: {subject}");
        let ts = store.record_transitions(&subject).unwrap();
        for t in &ts {
            println!("  {}  {:<16} → {:<16} {}", utc(t.at), t.from, t.to, t.reason);
        }
        let got: Vec<(String, String)> =
            ts.iter().map(|t| (t.to.clone(), Day::from_unix_seconds(t.at).to_string())).collect();
        let want: Vec<(String, String)> = story["expected"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["state"].as_str().unwrap().into(), e["day"].as_str().unwrap().into()))
            .collect();
        assert_eq!(got, want, "{kind}");
        for (t, e) in ts.iter().zip(story["expected"].as_array().unwrap()) {
            if let Some(at) = time(&e["at"]) {
                assert_eq!(t.at, at, "{kind}: {}", t.to);
            }
        }
    }
    let end = (last + 1) * DAY - 1;

    // Offline, from the cache: the same answers, no request, and it says so.
    let before = gh.requests.load(Ordering::SeqCst);
    let offline = GithubAccess { api: gh.base.clone(), offline: true };
    let opts = RefreshOptions {
        github: Some(offline.clone()),
        as_of: Some(end),
        mentions: mentions("kubernetes/kubernetes"),
        ..Default::default()
    };
    let r = records::refresh(&mut store, &opts, &Silent).unwrap();
    let m = r.mentions.as_ref().unwrap();
    assert!(m.offline && m.queries > 0 && m.from_cache == m.queries, "{m:?}");
    assert!(m.unanswered.is_empty(), "{m:?}");
    assert!(r.linked.is_empty() && r.transitions.is_empty(), "{r:?}");
    assert_eq!(gh.requests.load(Ordering::SeqCst), before, "offline sends nothing");
    // A repository never searched: every query is said not looked at, nothing changes.
    let opts = RefreshOptions { mentions: mentions("kubernetes/test-infra"), ..opts };
    let r = records::refresh(&mut store, &opts, &Silent).unwrap();
    let m = r.mentions.as_ref().unwrap();
    assert_eq!(m.queries, 0, "{m:?}");
    assert!(!m.unanswered.is_empty() && m.unanswered.iter().all(|u| u.contains("offline")), "{m:?}");
    assert!(m.unanswered.iter().all(|u| u.contains("repo:kubernetes/test-infra")), "{m:?}");
    assert_eq!(gh.requests.load(Ordering::SeqCst), before);

    // Someone unlinks a mention: the next search does not link it again, and says so.
    let subject = recs[0].subject.clone();
    let issue = store.record_links(&subject).unwrap()[0].reference.clone();
    let un = UnlinkOptions { subject: subject.clone(), reference: issue.clone(), by: "sig-lead".into(), at: Some(end) };
    records::unlink(&mut store, &un, &Silent).unwrap();
    let opts = RefreshOptions {
        github: Some(online),
        as_of: Some(end),
        mentions: mentions("kubernetes/kubernetes"),
        ..Default::default()
    };
    let r = records::refresh(&mut store, &opts, &Silent).unwrap();
    let m = r.mentions.as_ref().unwrap();
    assert!(r.linked.is_empty(), "{r:?}");
    assert!(
        m.kept_unlinked.iter().any(|k| k.starts_with(&format!("{subject} ← {issue}: unlinked by sig-lead"))),
        "{m:?}"
    );
    let active = store.record_links(&subject).unwrap().iter().filter(|l| l.reference == issue && l.active()).count();
    assert_eq!(active, 0);
}
