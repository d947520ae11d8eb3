//! Test fixtures: a store with snapshots, builds (hostile names and failure texts
//! included) and clusters, and a server on a free 127.0.0.1 port serving it.

#![allow(dead_code)]

use citriage_model::build::{BuildRecord, LogExcerpt, StoredTest};
use citriage_model::{Dataset, Day, JobEntry, JobStats, Snapshot, SnapshotMeta};
use citriage_store::{ClusterDay, ClusterMember, ClusterRun, Document, Store, StoredCluster};
use std::path::PathBuf;

pub const HOSTILE_JOB: &str = "<script>alert(1)</script>";
pub const HOSTILE_TEXT: &str = "boom <script>alert(\"xss\")</script> & <img src=x onerror=alert(2)>";
pub const GOOD_JOB: &str = "ci-kubernetes-e2e-gce";
/// 2026-11-20 00:00 UTC.
pub const T0: i64 = 1_795_132_800;
/// The clustering run's as-of: the end of 2026-11-22 (a three-day window).
pub const RUN_AS_OF: i64 = T0 + 3 * 86_400 - 1;
pub const PAYLOAD_TAG: &str = "4.22.0-0.nightly-2026-11-20-041530";
pub const REPORT_MD: &str = "# Failures triage\n\nSee <script>alert(3)</script> and [a build](https://prow.k8s.io/view/gs/b/1).\n\n## Tier 1\n\nA claim on line 7.\n";
pub const VERIFY_JSON: &str = r#"{"format": "citriage-verify/1", "report": "failures/2026-11-20", "verdict": "fail", "findings": [{"line": 7, "rule_id": "evidence", "rule": "r", "message": "claim <i>without</i> evidence", "evidence": []}], "unchecked": []}"#;
pub const PAYLOAD_JSON: &str = r#"{"format_version": 1, "payload": {"tag": "4.22.0-0.nightly-2026-11-20-041530", "stream_name": "4.22.0-0.nightly", "phase": "Rejected", "created": "2026-11-20T04:15:30Z"}, "blocking": {"total": 10, "succeeded": 8, "failed": 2, "pending": 0}, "history": [{"tag": "4.22.0-0.nightly-2026-11-20-041530", "phase": "Rejected", "created": "2026-11-20T04:15:30Z", "blocking": {"total": 10, "succeeded": 8, "failed": 2, "pending": 0}}, {"tag": "4.22.0-0.nightly-2026-11-19-101010", "phase": "Accepted", "created": "2026-11-19T10:10:10Z", "blocking": {"total": 10, "succeeded": 10, "failed": 0, "pending": 0}}], "decision": {"verdict": "Bisect"}}"#;
pub const PAYLOAD_HTML: &str = "<!DOCTYPE html>\n<html><head><style>h1{color:red}</style></head><body><main><h1>Payload analysis</h1></main></body></html>";

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
        kettle: None,
        testgrid: None,
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
        versions: Vec::new(),
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
        let mut tests = vec![
            test("[sig-node] pods run", "passed", None),
            test(
                "[sig-network] DNS resolves",
                if failing { "failed" } else { "passed" },
                failing.then_some("dial tcp 10.0.0.1:53: i/o timeout after 30s"),
            ),
        ];
        if i == 2 {
            // Build 102 passed after a retry: its first attempt of "pods run" failed.
            let mut first = test("[sig-node] pods run", "failed", Some("pod sandbox changed, it will be killed"));
            first.attempt = 0;
            tests[0].attempt = 1;
            tests.insert(0, first);
        }
        let mut b = build(GOOD_JOB, 100 + i as u32, T0 + i as i64 * 43_200, r, tests);
        if failing {
            b.excerpts = vec![LogExcerpt {
                source: "build-log.txt".into(),
                line_start: 42,
                line_end: 43,
                text: "E1120 12:00:01 dns.go:10] lookup failed\nF1120 12:00:02 dial tcp 10.0.0.1:53: i/o timeout"
                    .into(),
            }];
        }
        s.put_build(&b).expect("put");
    }
    s.put_build(&build(
        HOSTILE_JOB,
        7,
        T0 + 3600,
        "FAILURE",
        vec![test("<b>bold test</b>", "failed", Some(HOSTILE_TEXT))],
    ))
    .expect("put");
    // A clustering run: the DNS failure of build 101 and the hostile failure of build 7.
    let cluster =
        |id: &str, key: &str, text: &str, size: u64, first: i64, spans: Vec<usize>, owner: &str| StoredCluster {
            stable_id: id.into(),
            key: key.into(),
            k8s_id: format!("k-{id}"),
            size,
            first_seen: first,
            last_seen: first,
            text: text.into(),
            spans,
            owner: owner.into(),
            signatures: if id == "c-dns" { vec!["dns-timeout".into()] } else { Vec::new() },
            tests: 1,
            jobs: 1,
            run_as_of: RUN_AS_OF,
        };
    let dns_text = "dial tcp 10.0.0.1:53: i/o timeout after 30s";
    let run = ClusterRun { profile: "default".into(), as_of: RUN_AS_OF, window_days: 3, failures: 2, clusters: 2 };
    s.record_cluster_run(
        &run,
        &[
            cluster(
                "c-dns",
                "dial tcp UNIQ1: i/o timeout after DURATION",
                dns_text,
                1,
                T0 + 43_200,
                vec![9, 11, 23],
                "network",
            ),
            cluster("c-xss", HOSTILE_TEXT, HOSTILE_TEXT, 1, T0 + 3600, vec![HOSTILE_TEXT.len()], ""),
        ],
        &[
            ClusterMember {
                stable_id: "c-dns".into(),
                bucket: "kubernetes-ci-logs".into(),
                path: format!("logs/{GOOD_JOB}/101"),
                seq: 1,
            },
            ClusterMember {
                stable_id: "c-xss".into(),
                bucket: "kubernetes-ci-logs".into(),
                path: format!("logs/{HOSTILE_JOB}/7"),
                seq: 0,
            },
        ],
        &[
            ClusterDay {
                stable_id: "c-dns".into(),
                day: Day::from_unix_seconds(T0 + 43_200).0,
                job: GOOD_JOB.into(),
                test: "[sig-network] DNS resolves".into(),
                failures: 1,
            },
            ClusterDay {
                stable_id: "c-xss".into(),
                day: Day::from_unix_seconds(T0 + 3600).0,
                job: HOSTILE_JOB.into(),
                test: "<b>bold test</b>".into(),
                failures: 1,
            },
        ],
    )
    .expect("cluster run");
    let sub = |kind: &str, label: &str, test: &str| citriage_store::StoredSubPattern {
        stable_id: "c-dns".into(),
        kind: kind.into(),
        label: label.into(),
        failures: 1,
        first_seen: T0 + 43_200,
        last_seen: T0 + 43_200,
        job: GOOD_JOB.into(),
        build: format!("gs://kubernetes-ci-logs/logs/{GOOD_JOB}/101"),
        test: test.into(),
        excerpt: dns_text.into(),
    };
    s.record_cluster_subpatterns(
        "default",
        &[
            sub("template", "dial tcp <*> i/o timeout after <*>", "[sig-network] DNS resolves"),
            sub("job-family", "<script>family</script>", "[sig-network] DNS resolves"),
            sub("signature", "dns-timeout", "[sig-network] DNS resolves"),
        ],
    )
    .expect("sub-patterns");
    // Documents: a triage report with a verifier result, and a payload analysis.
    let doc = |kind: &str, key: &str, media: &str, title: &str, body: &str| Document {
        kind: kind.into(),
        key: key.into(),
        media_type: media.into(),
        title: title.into(),
        as_of: "2026-11-20".into(),
        body: body.into(),
    };
    s.put_document(&doc("triage", "failures/2026-11-20", "text/markdown", "Failures triage 2026-11-20", REPORT_MD))
        .expect("doc");
    s.put_document(&doc(
        "triage",
        "failures/2026-11-20",
        "application/json",
        "Failures triage 2026-11-20",
        "{\"jobs\": 3}",
    ))
    .expect("doc");
    s.put_document(&doc("verify", "triage/failures/2026-11-20", "application/json", "Verification", VERIFY_JSON))
        .expect("doc");
    s.put_document(&doc("payload", PAYLOAD_TAG, "application/json", "Payload", PAYLOAD_JSON)).expect("doc");
    s.put_document(&doc("payload", PAYLOAD_TAG, "text/html", "Payload", PAYLOAD_HTML)).expect("doc");
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
    start_with(citriage_web::ServeOptions::default())
}

/// A server over the fixture store with the given options.
pub fn start_with(opts: citriage_web::ServeOptions) -> Running {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = fixture_store(dir.path());
    serve_store(db, dir, opts)
}

/// A server over a given store (kept alive by `dir`).
pub fn serve_store(db: PathBuf, dir: tempfile::TempDir, opts: citriage_web::ServeOptions) -> Running {
    let server = citriage_web::Server::bind_with(db, "127.0.0.1:0".parse().expect("addr"), opts).expect("bind");
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
