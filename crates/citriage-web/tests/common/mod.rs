//! Test fixtures: a store with snapshots, builds (hostile names and failure texts
//! included) and clusters, and a server on a free 127.0.0.1 port serving it.

#![allow(dead_code)]

use citriage_model::build::{BuildRecord, StoredTest};
use citriage_model::{Dataset, Day, JobEntry, JobStats, Snapshot, SnapshotMeta};
use citriage_store::{Store, StoredCluster};
use std::path::PathBuf;

pub const HOSTILE_JOB: &str = "<script>alert(1)</script>";
pub const HOSTILE_TEXT: &str = "boom <script>alert(\"xss\")</script> & <img src=x onerror=alert(2)>";
pub const GOOD_JOB: &str = "ci-kubernetes-e2e-gce";
/// 2026-11-20 00:00 UTC.
pub const T0: i64 = 1_795_132_800;

fn test(name: &str, status: &str, text: Option<&str>) -> StoredTest {
    StoredTest {
        file: "artifacts/junit_01.xml".into(),
        suite: "e2e".into(),
        classname: "e2e".into(),
        name: name.into(),
        status: status.into(),
        duration: Some(1.5),
        failure_text: text.map(str::to_string),
        attempt: 0,
        informing: false,
        kettle_name: Some(name.into()),
    }
}

fn build(job: &str, id: u32, started: i64, result: &str, tests: Vec<StoredTest>) -> BuildRecord {
    BuildRecord {
        bucket: "kubernetes-ci-logs".into(),
        path: format!("logs/{job}/{id}"),
        job: job.into(),
        build_id: id.to_string(),
        kind: "periodic".into(),
        pr: None,
        commit_sha: None,
        repo_commit: None,
        repo_version: None,
        repos: None,
        started: Some(started),
        finished: Some(started + 600),
        duration: Some(600),
        result: Some(result.into()),
        state: None,
        executor: None,
        origin: "gcs".into(),
        problems: Vec::new(),
        complete: true,
        tests,
        artifacts: Vec::new(),
        excerpts: Vec::new(),
    }
}

fn snapshot(day: &str, jobs: &[(&str, u32)]) -> Snapshot {
    Snapshot::new(
        SnapshotMeta {
            dataset: Dataset::Failures,
            date: Day::parse(day).expect("valid day"),
            source: format!("failures-{day}.json"),
            sha256: format!("sha-{day}"),
        },
        jobs.iter()
            .map(|(j, d)| JobEntry { job: (*j).into(), stats: JobStats::Failures { failing_days: *d } })
            .collect(),
    )
}

/// Writes the fixture store into `dir` and returns its path.
pub fn fixture_store(dir: &std::path::Path) -> PathBuf {
    let path = dir.join("citriage.db");
    let mut s = Store::open(&path).expect("open store");
    s.import_snapshot(&snapshot("2026-11-19", &[(GOOD_JOB, 40), ("ci-old-job", 3)]), "2026-11-19T00:00:00Z")
        .expect("import");
    s.import_snapshot(
        &snapshot("2026-11-20", &[(GOOD_JOB, 41), (HOSTILE_JOB, 400), ("ci-new-job", 1)]),
        "2026-11-20T00:00:00Z",
    )
    .expect("import");
    let results = ["SUCCESS", "FAILURE", "SUCCESS", "ERROR", "ABORTED", "SUCCESS"];
    for (i, r) in results.iter().enumerate() {
        let failing = *r == "FAILURE";
        let tests = vec![
            test("[sig-node] pods run", "passed", None),
            test(
                "[sig-network] DNS resolves",
                if failing { "failed" } else { "passed" },
                failing.then_some("dial tcp 10.0.0.1:53: i/o timeout after 30s"),
            ),
        ];
        s.put_build(&build(GOOD_JOB, 100 + i as u32, T0 + i as i64 * 43_200, r, tests)).expect("put");
    }
    s.put_build(&build(
        HOSTILE_JOB,
        7,
        T0 + 3600,
        "FAILURE",
        vec![test("<b>bold test</b>", "failed", Some(HOSTILE_TEXT))],
    ))
    .expect("put");
    s.upsert_clusters(
        "default",
        &[
            StoredCluster {
                stable_id: "c-dns".into(),
                key: "dial tcp NUM.NUM.NUM.NUM:NUM: i/o timeout".into(),
                k8s_id: "k1".into(),
                size: 12,
                first_seen: T0,
                last_seen: T0 + 86_400,
                ..Default::default()
            },
            StoredCluster {
                stable_id: "c-xss".into(),
                key: HOSTILE_TEXT.into(),
                k8s_id: "k2".into(),
                size: 3,
                first_seen: T0 + 3600,
                last_seen: T0 + 3600,
                ..Default::default()
            },
        ],
    )
    .expect("clusters");
    path
}

/// A running server; dropping it shuts the server down and waits for it.
pub struct Running {
    pub base: String,
    pub dir: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<Result<(), citriage_web::ServeError>>>,
}

impl Running {
    /// Stops the server and returns how it ended.
    pub fn stop(mut self) -> Result<(), citriage_web::ServeError> {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        self.thread.take().map(|t| t.join().expect("server thread")).unwrap_or(Ok(()))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

pub fn start() -> Running {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = fixture_store(dir.path());
    let server = citriage_web::Server::bind(db, "127.0.0.1:0".parse().expect("addr")).expect("bind");
    let addr = server.local_addr().expect("addr");
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::spawn(move || {
        server.run(async move {
            let _ = rx.await;
        })
    });
    Running { base: format!("http://{addr}"), dir, stop: Some(tx), thread: Some(thread) }
}

/// Status, content type and body of a GET.
pub fn get(url: &str) -> (u16, String, String) {
    let client: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let mut res = client.get(url).call().expect("request");
    let status = res.status().as_u16();
    let ctype = res.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    let body = res.body_mut().read_to_string().expect("body");
    (status, ctype, body)
}

pub fn get_json(url: &str) -> (u16, serde_json::Value) {
    let (status, ctype, body) = get(url);
    assert!(ctype.starts_with("application/json"), "{url}: content type {ctype}");
    (status, serde_json::from_str(&body).expect("json body"))
}
