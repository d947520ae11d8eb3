//! JUnit files and build logs fetched from GCS over HTTP are read as streams, never held
//! whole. Against a real GCS-shaped server on 127.0.0.1 (JSON listing, objects with an
//! ETag and a generation, ranges honoured or not, `Content-Encoding: gzip` or not, gzip
//! stored objects):
//!
//! - the store filled through streams equals the one filled by reading every body whole
//!   (the default `ArtifactSource::open`), test results and log excerpts with their
//!   exact line numbers, with a tail small enough that most logs are read as tails;
//! - a body cut off mid-way once (resumed with `Range: bytes=N-`, or read again from the
//!   start when the server has no ranges or the transfer is content-encoded) gives the
//!   store of an uncut run;
//! - a body cut off every time fails its build with an error naming the object: the
//!   build is not stored (a rerun fetches it again), nothing of the cut file is kept,
//!   and every other build is stored as in an uncut run.

mod common;

use citriage_ingest::{discover_jobs, ingest_jobs, ExcerptLimits, IngestOptions, IngestSummary};
use citriage_sources::artifacts::{ArtifactSource, GcsHttp, Listing, LocalMirror};
use citriage_sources::{Body, HttpOptions, SourceError};
use citriage_store::Store;
use common::{gcs_listing, gcs_object, pct_decode, serve_requests, RawServer, Sending};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const BUCKET: &str = "kubernetes-ci-logs";

/// A synthetic world, plus one failed build whose JUnit file and log are stored
/// gzip-compressed (`junit_gz.xml` holds gzip bytes, `build-log.txt.gz`), its log long
/// enough to be read as a tail.
fn world() -> (tempfile::TempDir, PathBuf, usize) {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w");
    let mut p = citriage_synth::SynthParams::preset("tiny").unwrap();
    p.jobs = 4;
    p.builds_per_job = 6;
    p.payloads = 0;
    citriage_synth::generate(&p, &w, &mut |_| {}).unwrap();
    let root = w.join("gcs").join(BUCKET);
    let b = root.join("logs/ci-gzipped/1764000000");
    std::fs::create_dir_all(b.join("artifacts")).unwrap();
    std::fs::write(b.join("started.json"), r#"{"timestamp": 1764000000}"#).unwrap();
    std::fs::write(b.join("finished.json"), r#"{"timestamp": 1764000600, "result": "FAILURE"}"#).unwrap();
    let gz = |bytes: &[u8]| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    };
    let mut xml = String::from("<testsuite name=\"gz\">\n");
    for i in 0..40 {
        xml.push_str(&format!("<testcase classname=\"c\" name=\"ok{i}\" time=\"0.5\"/>\n"));
    }
    xml.push_str("<testcase classname=\"c\" name=\"bad\"><failure message=\"boom\">at x.go:12</failure></testcase>\n");
    xml.push_str("</testsuite>\n");
    std::fs::write(b.join("artifacts/junit_gz.xml"), gz(xml.as_bytes())).unwrap();
    let mut log = String::new();
    let mut lines = 0;
    for i in 0..3000 {
        log.push_str(&format!("I1126 12:00:00.000000 step {i} went fine\r\n"));
        lines += 1;
    }
    log.push_str("--- FAIL: TestAtTheEnd (2.00s)\n    end_test.go:7: it broke\n");
    std::fs::write(b.join("build-log.txt.gz"), gz(log.as_bytes())).unwrap();
    (dir, root, lines + 1)
}

/// How each object is sent: content-encoded for some, ranges for others, by a hash of
/// its name, so every way a body can come is used.
fn sending(path: &str) -> Sending {
    let h = path.bytes().fold(7u32, |a, b| a.wrapping_mul(31).wrapping_add(u32::from(b)));
    let streamed = path.ends_with(".xml") || path.contains("build-log.txt");
    Sending { gzip: streamed && h % 3 == 0, ranges: h % 3 != 1, cut_at: None }
}

/// Cuts left by object path.
type Cuts = Arc<Mutex<BTreeMap<String, usize>>>;

struct Gcs {
    server: RawServer,
    /// Requests that asked for a range and got a 206.
    ranged: Arc<AtomicUsize>,
}

fn serve(root: PathBuf, cuts: Cuts) -> Gcs {
    let ranged = Arc::new(AtomicUsize::new(0));
    let r2 = ranged.clone();
    let server = serve_requests(move |req| {
        if let Some(r) = gcs_listing(&root, BUCKET, &req.url, 4) {
            return r;
        }
        let Some(path) = req.url.strip_prefix(&format!("/{BUCKET}/")) else {
            return common::reply(404, b"no such bucket".to_vec());
        };
        let path = pct_decode(path);
        let mut how = sending(&path);
        if let Some(left) = cuts.lock().unwrap().get_mut(&path) {
            if *left > 0 {
                *left -= 1;
                how.cut_at = Some(400);
            }
        }
        let r = gcs_object(&root, &path, req, how);
        if r.status == 206 {
            r2.fetch_add(1, Ordering::SeqCst);
        }
        r
    });
    Gcs { server, ranged }
}

/// A source that reads every object whole (the trait's default `open`).
struct Whole<'a>(&'a GcsHttp);

impl ArtifactSource for Whole<'_> {
    fn bucket(&self) -> &str {
        self.0.bucket()
    }
    fn describe(&self) -> String {
        self.0.describe()
    }
    fn list(&self, prefix: &str) -> Result<Listing, SourceError> {
        self.0.list(prefix)
    }
    fn get(&self, path: &str) -> Result<Option<Body>, SourceError> {
        self.0.get(path)
    }
    fn locator(&self, path: &str) -> String {
        self.0.locator(path)
    }
}

fn http_opts() -> HttpOptions {
    HttpOptions {
        timeout: Duration::from_secs(10),
        attempts: 3,
        backoff: Duration::from_millis(10),
        ..Default::default()
    }
}

fn ingest_opts() -> IngestOptions {
    // A 700-byte tail: most logs are read as tails, so their line numbers are counted.
    let limits = ExcerptLimits { tail_bytes: 700, ..ExcerptLimits::default() };
    IngestOptions { concurrency: 4, log_excerpts: Some(limits), ..IngestOptions::default() }
}

fn ingest(src: &dyn ArtifactSource, jobs: &[String]) -> (Store, IngestSummary) {
    let mut st = Store::open_in_memory().unwrap();
    let s = ingest_jobs(src, &mut st, jobs, &ingest_opts(), &|_| {}).unwrap();
    (st, s)
}

/// Every build with its tests and excerpts.
fn all_builds(st: &mut Store) -> Vec<citriage_model::build::BuildRecord> {
    let mut v = Vec::new();
    for job in st.build_jobs().unwrap() {
        v.extend(st.job_builds_with_tests(&job, None).unwrap());
    }
    v
}

/// Every build with its tests and excerpts, one line each.
fn dump(st: &mut Store) -> Vec<String> {
    let mut v = Vec::new();
    for job in st.build_jobs().unwrap() {
        for b in st.job_builds_with_tests(&job, None).unwrap() {
            v.push(serde_json::to_string(&b).unwrap());
        }
    }
    v.sort();
    v
}

fn jobs_of(root: &Path) -> Vec<String> {
    discover_jobs(&LocalMirror::new(root, BUCKET)).unwrap()
}

#[test]
fn streamed_bodies_give_what_whole_bodies_give() {
    let (_keep, root, fail_line) = world();
    let jobs = jobs_of(&root);
    let gcs = serve(root.clone(), Arc::default());
    let src = GcsHttp::new(&gcs.server.base, BUCKET, http_opts(), None);
    let (mut streamed, s1) = ingest(&src, &jobs);
    let (mut whole, s2) = ingest(&Whole(&src), &jobs);
    assert!(s1.failures.is_empty() && s2.failures.is_empty(), "{:?} {:?}", s1.failures, s2.failures);
    assert!(s1.tests_stored > 100 && s1.excerpts_stored > 5, "{s1:?}");
    assert_eq!((s1.tests_stored, s1.excerpts_stored), (s2.tests_stored, s2.excerpts_stored));
    let (a, b) = (dump(&mut streamed), dump(&mut whole));
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x, y);
    }
    // The gzip-stored build: its tests, and its failure at its line in the whole log.
    let g = streamed.job_builds_with_tests("ci-gzipped", None).unwrap().remove(0);
    assert_eq!(g.tests.len(), 41, "{:?}", g.problems);
    let ex = g.excerpts.iter().find(|e| e.text.contains("TestAtTheEnd")).expect("the failure is excerpted");
    assert_eq!(ex.line_start as usize, fail_line);
    // Ranges were not needed: no body was cut.
    assert_eq!(gcs.ranged.load(Ordering::SeqCst), 0);
}

/// Every JUnit file and log of the world, from the bucket root.
fn streamed_objects(root: &Path) -> Vec<String> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let name = format!("{rel}{}", e.file_name().to_string_lossy());
            if e.file_type().unwrap().is_dir() {
                walk(&e.path(), &format!("{name}/"), out);
            } else if (name.contains("/artifacts/") && name.ends_with(".xml")) || name.contains("build-log.txt") {
                out.push(name);
            }
        }
    }
    let mut out = Vec::new();
    walk(root, "", &mut out);
    out.sort();
    out
}

#[test]
fn a_body_cut_off_once_gives_the_store_of_an_uncut_read() {
    let (_keep, root, _) = world();
    let jobs = jobs_of(&root);
    let uncut = serve(root.clone(), Arc::default());
    let (mut want, s) = ingest(&GcsHttp::new(&uncut.server.base, BUCKET, http_opts(), None), &jobs);
    assert!(s.failures.is_empty(), "{:?}", s.failures);

    // Every JUnit file and log is cut off once, 40% of the way in.
    let objects = streamed_objects(&root);
    assert!(objects.len() > 20, "{objects:?}");
    let cuts: Cuts = Arc::new(Mutex::new(objects.iter().map(|o| (o.clone(), 1)).collect()));
    let cut = serve(root.clone(), cuts.clone());
    let src = GcsHttp::new(&cut.server.base, BUCKET, http_opts(), None);
    let (mut got, s) = ingest(&src, &jobs);
    assert!(s.failures.is_empty(), "{:?}", s.failures);
    let left: Vec<String> = cuts.lock().unwrap().iter().filter(|(_, n)| **n > 0).map(|(p, _)| p.clone()).collect();
    // Logs of passing builds are not read; every other object was cut once.
    assert!(left.iter().all(|p| p.contains("build-log.txt")), "not read: {left:?}");
    assert!(cut.ranged.load(Ordering::SeqCst) > 5, "resumed with ranges where the server has them");
    let strip = |v: Vec<String>, base: &str| v.into_iter().map(|l| l.replace(base, "BASE")).collect::<Vec<_>>();
    assert_eq!(strip(dump(&mut got), &cut.server.base), strip(dump(&mut want), &uncut.server.base));
}

#[test]
fn a_body_cut_off_every_time_fails_its_build_and_nothing_of_it_is_stored() {
    let (_keep, root, _) = world();
    let jobs = jobs_of(&root);
    let uncut = serve(root.clone(), Arc::default());
    let (mut want, _) = ingest(&GcsHttp::new(&uncut.server.base, BUCKET, http_opts(), None), &jobs);

    // A JUnit file, and the log of another failed build, cut off every time.
    let victim = "logs/ci-gzipped/1764000000/artifacts/junit_gz.xml";
    let logged = all_builds(&mut want)
        .into_iter()
        .find(|b| b.job != "ci-gzipped" && !b.excerpts.is_empty())
        .expect("a failed build with excerpts");
    let log = format!("{}/build-log.txt", logged.path);
    assert!(root.join(&log).is_file(), "{log}");
    let cuts: Cuts =
        Arc::new(Mutex::new(BTreeMap::from([(victim.to_string(), usize::MAX), (log.clone(), usize::MAX)])));
    let cut = serve(root.clone(), cuts.clone());
    let src = GcsHttp::new(&cut.server.base, BUCKET, http_opts(), None);
    let (mut got, s) = ingest(&src, &jobs);
    assert_eq!(s.failures.len(), 2, "{:?}", s.failures);
    for object in [victim, log.as_str()] {
        let f = s.failures.iter().find(|f| f.reason.contains(object)).unwrap_or_else(|| panic!("{object} not named"));
        assert!(f.reason.contains(&format!("{}/{BUCKET}/{object}", cut.server.base)), "{}", f.reason);
        assert!(f.reason.contains("cut") && f.reason.contains("still after 3 attempts"), "{}", f.reason);
        assert_eq!(usize::MAX - cuts.lock().unwrap()[object], 3, "three transfers, then it gave up");
    }
    // Neither build is stored at all (a rerun fetches them again); the others are as
    // in an uncut run.
    assert!(got.job_builds_with_tests("ci-gzipped", None).unwrap().is_empty());
    assert!(got.builds(None).unwrap().iter().all(|b| b.path != logged.path));
    let strip = |v: Vec<String>, base: &str| v.into_iter().map(|l| l.replace(base, "BASE")).collect::<Vec<_>>();
    let quoted = format!("\"{}\"", logged.path);
    let want: Vec<String> = strip(dump(&mut want), &uncut.server.base)
        .into_iter()
        .filter(|l| !l.contains("ci-gzipped") && !l.contains(&quoted))
        .collect();
    assert_eq!(strip(dump(&mut got), &cut.server.base), want);

    // Once the server sends it whole again, a rerun stores the build as an uncut run does.
    cuts.lock().unwrap().clear();
    let s = ingest_jobs(&src, &mut got, &jobs, &ingest_opts(), &|_| {}).unwrap();
    assert!(s.failures.is_empty(), "{:?}", s.failures);
    let g = got.job_builds_with_tests("ci-gzipped", None).unwrap();
    assert_eq!(g.len(), 1);
    assert_eq!(g[0].tests.len(), 41);
    let again = all_builds(&mut got).into_iter().find(|b| b.path == logged.path).expect("stored by the rerun");
    assert_eq!(again.excerpts, logged.excerpts);
}
