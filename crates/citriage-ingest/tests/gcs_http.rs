//! Ingestion over HTTP from a real server on 127.0.0.1 that speaks GCS's JSON listing
//! API (small pages to force pagination, `delimiter`), serves objects (some gzip
//! encoded), and injects faults: 404, 429 with Retry-After, 500 then success, and a
//! truncated body. The store it fills must equal the one filled from the same world
//! read as a local mirror. Also: kill-and-resume, and bad input recorded per build.

mod common;

use citriage_ingest::{discover_jobs, ingest_jobs, IngestOptions};
use citriage_sources::artifacts::{ArtifactSource, GcsHttp, LocalMirror};
use citriage_sources::HttpOptions;
use citriage_store::Store;
use common::{pct_decode, Server};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const BUCKET: &str = "kubernetes-ci-logs";

fn world() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w");
    let mut p = citriage_synth::SynthParams::preset("tiny").unwrap();
    p.jobs = 6;
    p.builds_per_job = 8;
    p.payloads = 0;
    citriage_synth::generate(&p, &w, &mut |_| {}).unwrap();
    let root = w.join("gcs").join(BUCKET);
    (dir, root)
}

/// Faults by object path: the first N requests get the given status.
type Faults = Arc<Mutex<BTreeMap<String, (u16, usize)>>>;

fn serve(root: PathBuf, faults: Faults, page: usize) -> Server {
    common::serve(move |url| respond(&root, url, &faults, page))
}

fn respond(root: &Path, url: &str, faults: &Faults, page: usize) -> tiny_http::Response<Box<dyn Read + Send>> {
    let boxed = |data: Vec<u8>| -> Box<dyn Read + Send> { Box::new(std::io::Cursor::new(data)) };
    let mk = |status: u16, data: Vec<u8>| {
        tiny_http::Response::new(status.into(), vec![], boxed(data.clone()), Some(data.len()), None)
    };
    if let Some(mut listing) = common::gcs_listing(root, BUCKET, url, page) {
        let mut data = Vec::new();
        listing.body.read_to_end(&mut data).unwrap();
        return mk(listing.status, data);
    }
    let Some(path) = url.strip_prefix(&format!("/{BUCKET}/")) else { return mk(404, b"no such bucket".to_vec()) };
    let path = pct_decode(path);
    if let Some((status, left)) = faults.lock().unwrap().get_mut(&path) {
        if *left > 0 {
            *left -= 1;
            let mut r = mk(*status, b"fault".to_vec());
            if *status == 429 {
                r.add_header("Retry-After: 1".parse::<tiny_http::Header>().unwrap());
            }
            if *status == 299 {
                // A truncated body: promise more bytes than are sent, then close.
                let data = std::fs::read(root.join(&path)).unwrap();
                let half = data[..data.len() / 2].to_vec();
                return tiny_http::Response::new(
                    200.into(),
                    vec!["Connection: close".parse().unwrap()],
                    boxed(half),
                    Some(data.len()),
                    None,
                );
            }
            return r;
        }
    }
    match std::fs::read(root.join(&path)) {
        Ok(data) => {
            if path.ends_with(".xml") || path.ends_with("build-log.txt") {
                let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                e.write_all(&data).unwrap();
                let gz = e.finish().unwrap();
                let mut r = mk(200, gz);
                r.add_header("Content-Encoding: gzip".parse::<tiny_http::Header>().unwrap());
                r
            } else {
                mk(200, data)
            }
        }
        Err(_) => mk(404, b"Not Found".to_vec()),
    }
}

fn dump(store: &mut Store) -> Vec<String> {
    let mut v: Vec<String> =
        store.builds(None).unwrap().into_iter().map(|b| serde_json::to_string(&b).unwrap()).collect();
    v.extend(store.test_results().unwrap().into_iter().map(|t| serde_json::to_string(&t).unwrap()));
    // Log excerpts (from build-log.txt served gzip-encoded over HTTP), by build path.
    for job in store.build_jobs().unwrap() {
        for b in store.job_builds_with_tests(&job, None).unwrap() {
            v.extend(b.excerpts.iter().map(|e| format!("{} {}", b.path, serde_json::to_string(e).unwrap())));
        }
    }
    // What each build ran with (its images and version entries), by build path.
    let index = store.build_index().unwrap();
    let versions = store.build_versions(&index.iter().map(|b| b.id).collect::<Vec<_>>()).unwrap();
    for b in &index {
        for x in versions.get(&b.id).into_iter().flatten() {
            v.push(format!("{} {} {} {}", b.record.path, x.file, x.key, x.value));
        }
    }
    v
}

fn http_opts() -> HttpOptions {
    HttpOptions {
        timeout: Duration::from_secs(2),
        attempts: 3,
        backoff: Duration::from_millis(20),
        ..HttpOptions::default()
    }
}

#[test]
fn http_ingest_equals_local_ingest_despite_faults() {
    let (_keep, root) = world();
    let local = LocalMirror::new(root.clone(), BUCKET);
    let jobs = discover_jobs(&local).unwrap();
    let mut a = Store::open_in_memory().unwrap();
    ingest_jobs(&local, &mut a, &jobs, &IngestOptions::default(), &|_| {}).unwrap();

    // Pick fault targets from real build folders.
    let job0 = jobs.iter().find(|j| !j.starts_with("pr:")).unwrap();
    let builds0 = citriage_ingest::build_paths(&local, job0).unwrap();
    let faults: Faults = Arc::new(Mutex::new(BTreeMap::new()));
    faults.lock().unwrap().insert(format!("{}/started.json", builds0[0]), (429, 1));
    faults.lock().unwrap().insert(format!("{}/finished.json", builds0[1]), (500, 1));
    faults.lock().unwrap().insert(format!("{}/prowjob.json", builds0[2]), (299, 1));
    let srv = serve(root.clone(), faults.clone(), 3);
    let gcs = GcsHttp::new(&srv.base, BUCKET, http_opts(), None);
    assert_eq!(discover_jobs(&gcs).unwrap(), jobs, "paginated listing finds the same jobs");
    let mut b = Store::open_in_memory().unwrap();
    let t = std::time::Instant::now();
    let s = ingest_jobs(
        &gcs,
        &mut b,
        &jobs,
        &IngestOptions { concurrency: 4, max_builds_per_job: None, ..Default::default() },
        &|_| {},
    )
    .unwrap();
    assert!(s.failures.is_empty(), "{:?}", s.failures);
    assert!(t.elapsed() >= Duration::from_millis(900), "Retry-After: 1 honoured");
    assert!(faults.lock().unwrap().values().all(|(_, left)| *left == 0), "every fault was hit");
    let (da, db) = (dump(&mut a), dump(&mut b));
    assert_eq!(da.len(), db.len());
    assert!(
        da.iter().any(|l| l.contains(" prowjob.json spec.pod_spec.containers[0].image gcr.io/")),
        "the builds' images are kept"
    );
    // Locators differ (path vs URL) only in problems text; compare everything else.
    let strip = |v: Vec<String>| -> Vec<String> {
        v.into_iter()
            .map(|l| l.replace(&format!("{}/{BUCKET}", srv.base), "").replace(&root.display().to_string(), ""))
            .collect()
    };
    let (sa, sb) = (strip(da), strip(db));
    if let Some(i) = (0..sa.len()).find(|&i| sa[i] != sb[i]) {
        panic!("first difference at row {i}:\nlocal: {}\nhttp:  {}", sa[i], sb[i]);
    }
    assert!(srv.hits.load(Ordering::SeqCst) > 100);
}

#[test]
fn http_errors_are_reported_not_fatal() {
    let (_keep, root) = world();
    let local = LocalMirror::new(root.clone(), BUCKET);
    let jobs = discover_jobs(&local).unwrap();
    let job0 = jobs.iter().find(|j| !j.starts_with("pr:")).unwrap().clone();
    let builds0 = citriage_ingest::build_paths(&local, &job0).unwrap();
    let faults: Faults = Arc::new(Mutex::new(BTreeMap::new()));
    // A persistent 503: retries run out and the build is reported, others still land.
    faults.lock().unwrap().insert(format!("{}/started.json", builds0[0]), (503, 100));
    let srv = serve(root.clone(), faults, 50);
    let gcs = GcsHttp::new(&srv.base, BUCKET, http_opts(), None);
    let mut st = Store::open_in_memory().unwrap();
    let s = ingest_jobs(&gcs, &mut st, std::slice::from_ref(&job0), &IngestOptions::default(), &|_| {}).unwrap();
    assert_eq!(s.failures.len(), 1, "{:?}", s.failures);
    assert!(
        s.failures[0].reason.contains("HTTP 503") && s.failures[0].reason.contains("started.json"),
        "{}",
        s.failures[0].reason
    );
    assert_eq!(s.builds_stored, builds0.len() - 1);
    // 404 for a missing object is not an error: the build is stored with a problem.
    assert_eq!(gcs.get("logs/nope/1/started.json").unwrap(), None);
}

#[test]
fn kill_and_resume_gives_the_same_store() {
    let (_keep, root) = world();
    let dir = tempfile::tempdir().unwrap();
    let local = LocalMirror::new(root.clone(), BUCKET);
    let jobs = discover_jobs(&local).unwrap();
    let mut whole = Store::open(&dir.path().join("whole.db")).unwrap();
    ingest_jobs(&local, &mut whole, &jobs, &IngestOptions::default(), &|_| {}).unwrap();
    // Interrupt an ingest from inside its progress callback by aborting the process is
    // not possible in-process; instead run the real binary-equivalent path in a child
    // thread and stop it after some builds by panicking out of the callback.
    let path = dir.path().join("resumed.db");
    {
        let mut st = Store::open(&path).unwrap();
        let count = AtomicUsize::new(0);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            ingest_jobs(
                &local,
                &mut st,
                &jobs,
                &IngestOptions { concurrency: 2, max_builds_per_job: None, ..Default::default() },
                &|p| {
                    if matches!(p, citriage_ingest::Progress::Build { .. })
                        && count.fetch_add(1, Ordering::SeqCst) == 37
                    {
                        panic!("simulated kill");
                    }
                },
            )
        }));
        assert!(r.is_err(), "the run was interrupted");
    }
    let mut st = Store::open(&path).unwrap();
    let (partial, _, _) = st.build_counts().unwrap();
    assert!(partial > 0 && partial < whole.build_counts().unwrap().0, "{partial}");
    let s = ingest_jobs(&local, &mut st, &jobs, &IngestOptions::default(), &|_| {}).unwrap();
    assert!(s.builds_skipped > 0, "complete builds are not fetched again");
    assert_eq!(dump(&mut st), dump(&mut whole));
}
