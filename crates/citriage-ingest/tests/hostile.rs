//! Hostile buckets and mirrors: a real HTTP server on 127.0.0.1 that speaks GCS's JSON
//! listing API with planted names (`..`, other prefixes, backslashes, pointers to other
//! buckets), and a mirror with symlinks out of its root. Every refused name is recorded
//! (as a problem on the build, or as a failure of the job for a pointer), nothing is
//! read or written outside its root, and no build is stored under an unsafe path.

mod common;

use citriage_ingest::{ingest_jobs, IngestOptions};
use citriage_sources::artifacts::{ArtifactSource, GcsHttp, LocalMirror};
use citriage_sources::{HttpOptions, SourceError};
use citriage_store::Store;
use common::{pct_decode, respond, Server};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

const BUCKET: &str = "b";

/// What the fake bucket answers: listings by prefix (raw JSON) and objects by name.
#[derive(Default, Clone)]
struct World {
    listings: BTreeMap<String, String>,
    objects: BTreeMap<String, Vec<u8>>,
}

fn serve(world: World) -> Server {
    common::serve(move |url| {
        if let Some(q) = url.strip_prefix(&format!("/storage/v1/b/{BUCKET}/o?")) {
            let params: BTreeMap<String, String> =
                q.split('&').filter_map(|kv| kv.split_once('=').map(|(k, v)| (k.to_string(), pct_decode(v)))).collect();
            let prefix = params.get("prefix").cloned().unwrap_or_default();
            match world.listings.get(&prefix) {
                Some(j) => respond(200, j.clone().into_bytes()),
                None => respond(200, br#"{"kind":"storage#objects"}"#.to_vec()),
            }
        } else if let Some(p) = url.strip_prefix(&format!("/{BUCKET}/")) {
            match world.objects.get(&pct_decode(p)) {
                Some(b) => respond(200, b.clone()),
                None => respond(404, b"Not Found".to_vec()),
            }
        } else {
            respond(404, b"Not Found".to_vec())
        }
    })
}

fn opts() -> HttpOptions {
    HttpOptions { timeout: Duration::from_secs(5), attempts: 1, ..HttpOptions::default() }
}

fn listing(items: &[&str], prefixes: &[&str]) -> String {
    let items: Vec<serde_json::Value> = items.iter().map(|n| serde_json::json!({"name": n, "size": "10"})).collect();
    serde_json::json!({"kind": "storage#objects", "items": items, "prefixes": prefixes}).to_string()
}

const STARTED: &[u8] = br#"{"timestamp": 1700000000}"#;
const FINISHED_OK: &[u8] = br#"{"timestamp": 1700000600, "result": "SUCCESS", "passed": true}"#;
const JUNIT: &[u8] = br#"<testsuite name="s"><testcase classname="c" name="t" time="1"/></testsuite>"#;

fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn planted_names_in_a_gcs_listing_are_refused_recorded_and_never_written() {
    let mut w = World::default();
    w.listings.insert("logs/".into(), listing(&[], &["logs/job/", "logs/../../etc/"]));
    w.listings.insert("logs/job/".into(), listing(&[], &["logs/job/1/", "logs/job/../../../tmp/9/"]));
    w.listings.insert(
        "logs/job/1/".into(),
        listing(
            &[
                "logs/job/1/started.json",
                "logs/job/1/finished.json",
                "logs/job/1/../../../../tmp/evil.txt",
                "logs/other/2/build-log.txt",
                "logs/job/1/a\\..\\..\\b",
            ],
            &["logs/job/1/artifacts/"],
        ),
    );
    w.listings.insert("logs/job/1/artifacts/".into(), listing(&["logs/job/1/artifacts/junit_01.xml"], &[]));
    w.listings.insert(
        "pr-logs/directory/pjob/".into(),
        listing(&["pr-logs/directory/pjob/5.txt", "pr-logs/directory/pjob/6.txt", "pr-logs/directory/pjob/7.txt"], &[]),
    );
    for (k, v) in [
        ("logs/job/1/started.json", STARTED),
        ("logs/job/1/finished.json", FINISHED_OK),
        ("logs/job/1/artifacts/junit_01.xml", JUNIT),
        ("pr-logs/directory/pjob/5.txt", b"gs://b/pr-logs/pull/o_r/1/pjob/5"),
        ("pr-logs/directory/pjob/6.txt", b"gs://b/logs/../../../tmp/6"),
        ("pr-logs/directory/pjob/7.txt", b"gs://other-bucket/logs/pjob/7"),
        ("pr-logs/pull/o_r/1/pjob/5/started.json", STARTED),
        ("pr-logs/pull/o_r/1/pjob/5/finished.json", FINISHED_OK),
        // What a naive client would have read or written through the planted names.
        ("logs/job/1/../../../../tmp/evil.txt", b"planted"),
    ] {
        w.objects.insert(k.to_string(), v.to_vec());
    }
    let srv = serve(w);
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let gcs = GcsHttp::new(&srv.base, BUCKET, opts(), Some(cache.clone()));

    // Direct reads of unsafe names are refused before any request.
    for bad in ["logs/../x", "/etc/passwd", "logs/a\\..\\b", "logs/a\0b"] {
        let e = gcs.get(bad).unwrap_err();
        assert!(matches!(e, SourceError::UnsafeName { .. }), "{bad:?}: {e}");
        assert!(e.to_string().contains("refused object name"), "{e}");
    }
    let jobs = citriage_ingest::discover_jobs(&gcs).unwrap();
    assert_eq!(jobs, vec!["job".to_string()], "the planted prefix is not a job");
    // ... and it is named, for the caller to report.
    let found = citriage_ingest::discover_job_list(&gcs).unwrap();
    assert_eq!(found.jobs, jobs);
    assert_eq!(found.refused.len(), 1, "{:?}", found.refused);
    assert!(found.refused[0].contains("refused object name \"logs/../../etc/\""), "{:?}", found.refused);

    let mut st = Store::open_in_memory().unwrap();
    let s = ingest_jobs(&gcs, &mut st, &["job".into(), "pr:pjob".into()], &IngestOptions::default(), &|_| {}).unwrap();
    let builds = st.builds(None).unwrap();
    let paths: Vec<&str> = builds.iter().map(|b| b.path.as_str()).collect();
    assert_eq!(paths.len(), 2, "{paths:?}");
    assert!(paths.contains(&"logs/job/1") && paths.contains(&"pr-logs/pull/o_r/1/pjob/5"), "{paths:?}");
    let b = builds.iter().find(|b| b.path == "logs/job/1").unwrap();
    let problems = b.problems.join("\n");
    for name in ["logs/job/1/../../../../tmp/evil.txt", "logs/other/2/build-log.txt", "logs/job/1/a\\\\..\\\\..\\\\b"] {
        assert!(problems.contains(&format!("refused object name \"{name}\"")), "{name} not in:\n{problems}");
    }
    assert!(b.artifacts.iter().all(|(p, _)| !p.contains("..") && !p.starts_with("../")), "{:?}", b.artifacts);
    assert_eq!(st.job_builds_with_tests("job", None).unwrap()[0].tests.len(), 1);
    // The refused pointers are reported with their targets; the listing's planted
    // build folder is refused too.
    let reasons: Vec<&str> = s.failures.iter().map(|f| f.reason.as_str()).collect();
    let all = reasons.join("\n");
    assert!(all.contains("6.txt") && all.contains("gs://b/logs/../../../tmp/6"), "{all}");
    assert!(all.contains("7.txt") && all.contains("another bucket"), "{all}");
    assert!(all.contains("logs/job/../../../tmp/9/"), "{all}");
    // Everything the cache holds lies inside it, under the bucket's folder.
    for f in files_under(dir.path()) {
        assert!(f.starts_with(&format!("cache/{BUCKET}/")), "written outside the cache: {f}");
    }
    assert!(!files_under(&cache).is_empty(), "the cache was used");
}

#[cfg(unix)]
#[test]
fn a_mirror_never_follows_symlinks_out_of_its_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("mirror");
    let outside = dir.path().join("outside");
    let b = root.join("logs/job/1");
    std::fs::create_dir_all(&b).unwrap();
    std::fs::create_dir_all(outside.join("artifacts")).unwrap();
    std::fs::write(b.join("started.json"), STARTED).unwrap();
    std::fs::write(b.join("finished.json"), br#"{"timestamp": 1700000600, "result": "FAILURE"}"#).unwrap();
    std::fs::write(outside.join("secret.txt"), "F1126 secret: password=hunter2\nerror: leaked\n").unwrap();
    std::fs::write(outside.join("artifacts/junit_x.xml"), JUNIT).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), b.join("build-log.txt")).unwrap();
    std::os::unix::fs::symlink(outside.join("artifacts"), b.join("artifacts")).unwrap();
    // A symlink that stays inside the root is followed.
    std::fs::create_dir_all(root.join("logs/job/1-data")).unwrap();
    std::fs::write(root.join("logs/job/1-data/prowjob.json"), br#"{"spec": {"job": "job", "type": "periodic"}}"#)
        .unwrap();
    std::os::unix::fs::symlink(root.join("logs/job/1-data/prowjob.json"), b.join("prowjob.json")).unwrap();

    let src = LocalMirror::new(&root, BUCKET);
    let e = src.get("logs/job/1/build-log.txt").unwrap_err();
    assert!(matches!(e, SourceError::UnsafeName { .. }) && e.to_string().contains("out of the mirror"), "{e}");
    assert!(src.get("logs/job/1/prowjob.json").unwrap().is_some(), "a symlink inside the root is followed");
    assert!(matches!(src.get("logs/../../outside/secret.txt"), Err(SourceError::UnsafeName { .. })));

    let mut st = Store::open_in_memory().unwrap();
    ingest_jobs(&src, &mut st, &["job".into()], &IngestOptions::default(), &|_| {}).unwrap();
    let builds = st.builds(None).unwrap();
    assert_eq!(builds.len(), 1);
    let rec = st.job_builds_with_tests("job", None).unwrap().remove(0);
    let problems = builds[0].problems.join("\n");
    assert!(problems.contains("refused object name \"logs/job/1/build-log.txt\""), "{problems}");
    assert!(problems.contains("refused object name \"logs/job/1/artifacts\""), "{problems}");
    assert!(rec.excerpts.is_empty() && rec.tests.is_empty(), "nothing outside the mirror was read");
    assert!(builds.iter().all(|b| !format!("{b:?}").contains("hunter2")));
}

fn gzip_of_zeros(n: usize) -> Vec<u8> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&vec![0u8; n]).unwrap();
    gz.finish().unwrap()
}

#[test]
fn gzip_bombs_are_stopped_at_the_limit_and_named_on_the_build() {
    let mut w = World::default();
    w.listings.insert("logs/job/".into(), listing(&[], &["logs/job/2/"]));
    w.listings.insert(
        "logs/job/2/".into(),
        listing(
            &["logs/job/2/started.json", "logs/job/2/finished.json", "logs/job/2/build-log.txt"],
            &["logs/job/2/artifacts/"],
        ),
    );
    w.listings.insert(
        "logs/job/2/artifacts/".into(),
        listing(&["logs/job/2/artifacts/junit_bomb.xml", "logs/job/2/artifacts/junit_ok.xml"], &[]),
    );
    let bomb = gzip_of_zeros(16 << 20);
    for (k, v) in [
        ("logs/job/2/started.json", STARTED.to_vec()),
        ("logs/job/2/finished.json", br#"{"timestamp": 1700000600, "result": "FAILURE"}"#.to_vec()),
        ("logs/job/2/build-log.txt", bomb.clone()),
        ("logs/job/2/artifacts/junit_bomb.xml", bomb),
        ("logs/job/2/artifacts/junit_ok.xml", JUNIT.to_vec()),
    ] {
        w.objects.insert(k.to_string(), v);
    }
    let srv = serve(w);
    let gcs = GcsHttp::new(&srv.base, BUCKET, HttpOptions { max_bytes: 4 << 20, ..opts() }, None);
    let mut st = Store::open_in_memory().unwrap();
    let s = ingest_jobs(&gcs, &mut st, &["job".into()], &IngestOptions::default(), &|_| {}).unwrap();
    assert!(s.failures.is_empty(), "{:?}", s.failures);
    let b = st.job_builds_with_tests("job", None).unwrap().remove(0);
    let problems = b.problems.join("\n");
    for name in ["build-log.txt", "artifacts/junit_bomb.xml"] {
        let line = b.problems.iter().find(|p| p.contains(&format!("logs/job/2/{name}"))).unwrap_or_else(|| {
            panic!("{name} not named in:\n{problems}");
        });
        assert!(line.contains("inflates to more than the 4194304-byte limit"), "{line}");
    }
    assert!(!problems.contains("looks binary") && !problems.contains("is empty"), "{problems}");
    assert_eq!(b.result.as_deref(), Some("FAILURE"));
    assert_eq!(b.tests.len(), 1, "the other JUnit file is still read");
}

#[test]
fn overflowing_timestamps_are_problems_and_the_build_keeps_its_result() {
    let mut w = World::default();
    w.listings.insert("logs/job/".into(), listing(&[], &["logs/job/3/", "logs/job/4/", "logs/job/5/"]));
    for (id, started, finished) in [
        ("3", r#"{"timestamp": 9223372036854775807}"#, r#"{"timestamp": 1e300, "result": "FAILURE"}"#),
        ("4", r#"{"timestamp": -62135596800}"#, r#"{"timestamp": "99999999999", "result": "SUCCESS"}"#),
        ("5", r#"{"timestamp": 1700000000}"#, r#"{"timestamp": 1699999000, "result": "SUCCESS"}"#),
    ] {
        let b = format!("logs/job/{id}/");
        w.listings.insert(b.clone(), listing(&[&format!("{b}started.json"), &format!("{b}finished.json")], &[]));
        w.objects.insert(format!("{b}started.json"), started.as_bytes().to_vec());
        w.objects.insert(format!("{b}finished.json"), finished.as_bytes().to_vec());
    }
    let srv = serve(w);
    let gcs = GcsHttp::new(&srv.base, BUCKET, opts(), None);
    let mut st = Store::open_in_memory().unwrap();
    let opts = IngestOptions { log_excerpts: None, ..IngestOptions::default() };
    ingest_jobs(&gcs, &mut st, &["job".into()], &opts, &|_| {}).unwrap();
    let builds = st.builds(None).unwrap();
    let by = |id: &str| builds.iter().find(|b| b.build_id == id).unwrap();
    let b3 = by("3");
    assert_eq!((b3.started, b3.finished, b3.result.as_deref()), (None, None, Some("FAILURE")));
    let p = b3.problems.join("\n");
    assert!(p.contains("started.json: field \"timestamp\": 9223372036854775807 is outside the accepted window"), "{p}");
    // The number is named as the file writes it, never as a saturated stand-in.
    assert!(p.contains("finished.json: field \"timestamp\": the number 1e300 is too large"), "{p}");
    let b4 = by("4");
    assert_eq!((b4.started, b4.finished, b4.result.as_deref()), (None, None, Some("SUCCESS")));
    assert_eq!(b4.problems.len(), 2, "{:?}", b4.problems);
    // Finished before it started: the times are kept, the duration is not negative.
    let b5 = by("5");
    assert_eq!((b5.started, b5.duration), (Some(1_700_000_000), None));
}
