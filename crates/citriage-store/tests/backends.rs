//! Both engines behind one interface: the same writes give the same content (equal
//! digests and equal reads) on SQLite and PostgreSQL; the schemas match column for
//! column; several writers at once leave the same store as one writer alone; a store
//! copies from one engine to the other and back unchanged; interned ids learnt by one
//! writer survive another writer's strings; PostgreSQL connections are pooled and its
//! change notifications stand in for SQLite's data_version.

mod common;

use citriage_model::build::{BuildRecord, BuildVersion, LogExcerpt, StoredTest};
use citriage_model::{Dataset, Day, Evidence, EvidenceKind, FlakeStats, JobEntry, JobStats, Snapshot, SnapshotMeta};
use citriage_store::{
    CachedHttp, ClusterDay, ClusterMember, ClusterRun, Document, Location, Store, StoredCluster, SCHEMA_VERSION,
};
use std::collections::BTreeMap;

fn test(name: &str, status: &str, text: Option<&str>) -> StoredTest {
    StoredTest {
        file: "artifacts/junit_01.xml".into(),
        suite: "Kubernetes e2e suite".into(),
        classname: "Kubernetes e2e suite".into(),
        name: name.into(),
        status: status.into(),
        duration: Some(1.25),
        failure_text: text.map(str::to_string),
        attempt: 0,
        informing: false,
        kettle_name: Some(name.into()),
    }
}

/// Build `n` of a job: a few shared test names (so writers intern the same strings),
/// one name of its own, a failure with a text, artifacts (one listed twice) and an
/// excerpt; every third build has no start time; every fourth carries kettle's reading.
fn build(job: &str, n: u32) -> BuildRecord {
    let failed = n.is_multiple_of(2);
    BuildRecord {
        kettle: n.is_multiple_of(4).then(|| citriage_model::build::KettleFacts {
            result: Some("success".into()),
            version: Some("v1.35.0-alpha.1".into()),
            repo_commit: None,
            repos: Some(r#"{"kubernetes/kubernetes": "master:0a,7:beef"}"#.into()),
            dropped: n.is_multiple_of(8).then(|| "junit_01.xml: time=\"1.5s\"".into()),
        }),
        // Every third build says where TestGrid shows its job.
        testgrid: n.is_multiple_of(3).then(|| citriage_model::build::TestgridPlace {
            dashboards: vec!["sig-release-master-blocking".into(), "google-gce".into()],
            tab: Some(format!("{job}-tab")),
        }),
        bucket: "kubernetes-ci-logs".into(),
        path: format!("logs/{job}/{}", 1000 + n),
        job: job.into(),
        build_id: format!("{}", 1000 + n),
        kind: "periodic".into(),
        pr: n.is_multiple_of(5).then_some(u64::from(n)),
        commit_sha: Some(format!("{n:040x}")),
        repo_commit: None,
        repo_version: Some("v1.35.0-alpha.1".into()),
        repos: None,
        started: (!n.is_multiple_of(3)).then_some(1_700_000_000 + i64::from(n) * 3600),
        finished: Some(1_700_000_000 + i64::from(n) * 3600 + 600),
        duration: Some(600),
        result: Some(if failed { "FAILURE" } else { "SUCCESS" }.into()),
        state: None,
        executor: Some("gcs".into()),
        origin: "gcs".into(),
        problems: if n.is_multiple_of(7) { vec!["junit_02.xml: truncated".into()] } else { Vec::new() },
        complete: true,
        tests: vec![
            test("[sig-node] Pods should run", "passed", None),
            test(
                "[sig-storage] CSI mounts é",
                if failed { "failed" } else { "passed" },
                failed.then_some("timed out\nwaiting"),
            ),
            test(&format!("[sig-apps] {job} own test {}", n % 4), "passed", None),
            test("[sig-network] skipped one", "skipped", None),
        ],
        artifacts: vec![
            ("build-log.txt".into(), Some(100 + u64::from(n))),
            ("artifacts/junit_01.xml".into(), None),
            ("build-log.txt".into(), Some(200 + u64::from(n))),
        ],
        excerpts: if failed {
            vec![LogExcerpt {
                source: "build-log.txt".into(),
                line_start: 7,
                line_end: 9,
                text: "E1 boom\nE2\nE3".into(),
            }]
        } else {
            Vec::new()
        },
        // Even builds say what they ran with; the image moves at build 4.
        versions: if failed { versions(if n < 4 { "v20261101" } else { "v20261115" }) } else { Vec::new() },
    }
}

fn versions(tag: &str) -> Vec<BuildVersion> {
    vec![
        BuildVersion {
            file: "finished.json".into(),
            key: "metadata.job-version".into(),
            value: "v1.35.0-alpha.1 é".into(),
        },
        BuildVersion {
            file: "prowjob.json".into(),
            key: "spec.pod_spec.containers[test].image".into(),
            value: format!("gcr.io/k8s-staging-test-infra/kubekins-e2e:{tag}-master"),
        },
    ]
}

fn snapshot(date: &str, jobs: &[&str]) -> Snapshot {
    Snapshot::new(
        SnapshotMeta {
            dataset: Dataset::Flakes,
            date: Day::parse(date).unwrap(),
            source: format!("flakes-{date}.json"),
            sha256: format!("sha-{date}"),
        },
        jobs.iter()
            .map(|j| JobEntry {
                job: j.to_string(),
                stats: JobStats::Flakes(FlakeStats {
                    consistency: 0.875,
                    flakes: 3,
                    test_flakes: Some(BTreeMap::from([("[sig-node] Pods should run".to_string(), 2)])),
                }),
            })
            .collect(),
    )
}

const JOBS: [&str; 3] = ["ci-kubernetes-e2e-gce", "ci-kubernetes-unit", "pr:pull-kubernetes-e2e-kind"];

/// Everything the store holds, written through its interface.
fn fill(st: &mut Store) {
    for (i, job) in JOBS.iter().enumerate() {
        for n in 0..6 {
            st.put_build(&build(job, n + 10 * i as u32)).unwrap();
        }
    }
    st.import_snapshot(&snapshot("2026-11-20", &JOBS), "2026-11-21T00:00:00Z").unwrap();
    st.import_snapshot(&snapshot("2026-11-21", &JOBS[..2]), "2026-11-21T00:00:00Z").unwrap();
    let cluster = |id: &str| StoredCluster {
        stable_id: id.into(),
        key: format!("timed out {id}"),
        k8s_id: format!("k-{id}"),
        size: 2,
        first_seen: 1_700_000_000,
        last_seen: 1_700_090_000,
        text: "timed out\nwaiting".into(),
        spans: vec![9, 8],
        owner: "storage".into(),
        signatures: vec!["timeout".into()],
        tests: 1,
        jobs: 2,
        run_as_of: 1_700_100_000,
    };
    let members = vec![
        ClusterMember {
            stable_id: "c1".into(),
            bucket: "kubernetes-ci-logs".into(),
            path: format!("logs/{}/1000", JOBS[0]),
            seq: 1,
        },
        ClusterMember {
            stable_id: "c1".into(),
            bucket: "kubernetes-ci-logs".into(),
            path: format!("logs/{}/1002", JOBS[0]),
            seq: 1,
        },
        ClusterMember {
            stable_id: "c1".into(),
            bucket: "kubernetes-ci-logs".into(),
            path: format!("logs/{}/1002", JOBS[0]),
            seq: 1,
        },
    ];
    let daily = vec![
        ClusterDay { stable_id: "c1".into(), day: 19_700, job: JOBS[0].into(), test: "t".into(), failures: 1 },
        ClusterDay { stable_id: "c1".into(), day: 19_700, job: JOBS[0].into(), test: "t".into(), failures: 2 },
    ];
    let run = ClusterRun { profile: "default".into(), as_of: 1_700_100_000, window_days: 14, failures: 2, clusters: 1 };
    st.record_cluster_run(&run, &[cluster("c1")], &members, &daily).unwrap();
    st.upsert_clusters("k8s-triage", &[cluster("k1")]).unwrap();
    let sub = |label: &str, failures: u64| citriage_store::StoredSubPattern {
        stable_id: "c1".into(),
        kind: "template".into(),
        label: label.into(),
        failures,
        first_seen: 1_700_000_000,
        last_seen: 1_700_090_000,
        job: JOBS[0].into(),
        build: "1002".into(),
        test: "[sig-storage] CSI mounts é".into(),
        excerpt: "timed out".into(),
    };
    st.record_cluster_subpatterns("default", &[sub("timed out <*>", 1), sub("b", 2), sub("timed out <*>", 2)]).unwrap();
    st.put_document(&Document {
        kind: "triage".into(),
        key: "flakes/2026-11-21".into(),
        media_type: "text/markdown".into(),
        title: "Flakes".into(),
        as_of: "2026-11-21".into(),
        body: "# Flakes é\n".into(),
    })
    .unwrap();
    let ev = Evidence::new(
        EvidenceKind::BuildResult,
        "gs://kubernetes-ci-logs/logs/x/1",
        "result=FAILURE",
        "",
        "2026-11-21",
    );
    st.record_evidence(&[ev], "2026-11-21T10:00:00Z").unwrap();
    st.http_cache_put(
        "https://api.github.com/repos/kubernetes/kubernetes/pulls/1",
        &CachedHttp {
            status: 200,
            etag: Some("\"e1\"".into()),
            body: vec![0, 159, 146, 150, 255],
            next: None,
            fetched_at: 1_700_000_000,
        },
    )
    .unwrap();
}

/// What the reads of the interface return, as text (row ids left out).
fn reads(st: &mut Store) -> Vec<String> {
    let mut out = Vec::new();
    out.push(format!(
        "{:?}",
        st.build_index().unwrap().into_iter().map(|b| (b.record, b.failed_tests)).collect::<Vec<_>>()
    ));
    for job in st.build_jobs().unwrap() {
        out.push(format!("{:?}", st.job_builds_with_tests(&job, None).unwrap()));
        out.push(format!("{:?}", st.job_builds_with_tests_opts(&job, Some(1_700_010_000), false).unwrap()));
    }
    out.push(format!("{:?}", st.builds(Some(JOBS[1])).unwrap()));
    let mut texts = Vec::new();
    st.for_each_failure_text(None, |_, seq, name, text| texts.push((seq, name.to_string(), text.to_string()))).unwrap();
    out.push(format!("{texts:?}"));
    let mut ex = Vec::new();
    st.for_each_excerpt(Some(1_700_000_000), |_, e| ex.push(e.clone())).unwrap();
    out.push(format!("{ex:?}"));
    let snaps = st.list_snapshots(None).unwrap();
    for s in &snaps {
        out.push(format!("{:?} {:?}", st.load_snapshot(s.id).unwrap(), st.snapshot_job_names(s.id).unwrap()));
    }
    out.push(format!("{:?}", st.clusters("default").unwrap()));
    out.push(format!("{:?}", st.cluster("k8s-triage", "k1").unwrap()));
    out.push(format!("{:?}", st.cluster_run("default").unwrap()));
    out.push(format!("{:?}", st.cluster_daily("default").unwrap()));
    out.push(format!("{:?}", st.cluster_failures("default", "c1", 10).unwrap()));
    out.push(format!("{:?}", st.cluster_first_ids("default").unwrap()));
    out.push(format!("{:?}", st.cluster_subpatterns("default", "c1").unwrap()));
    out.push(format!("{:?}", st.documents(None).unwrap()));
    out.push(format!("{:?}", st.document("triage", "flakes/2026-11-21", "text/markdown").unwrap()));
    out.push(format!("{:?}", st.evidence_by_locator("gs://kubernetes-ci-logs/").unwrap()));
    out.push(format!("{:?}", st.http_cache_get("https://api.github.com/repos/kubernetes/kubernetes/pulls/1").unwrap()));
    out.push(format!("{:?}", st.build_known(JOBS[0], "1001").unwrap()));
    out.push(format!("{:?}", st.build_counts().unwrap()));
    let ids: Vec<i64> = st.build_index().unwrap().iter().map(|b| b.id).collect();
    let by_path: Vec<(String, Vec<BuildVersion>)> = st
        .build_versions(&ids)
        .unwrap()
        .into_iter()
        .map(|(id, v)| (st.build_index().unwrap().into_iter().find(|b| b.id == id).unwrap().record.path, v))
        .collect();
    out.push(format!("{by_path:?}"));
    out
}

#[test]
fn the_same_writes_read_back_the_same_on_both_engines() {
    let fresh = common::backends("the_same_writes_read_back_the_same_on_both_engines");
    let mut seen: Vec<(String, String, Vec<String>)> = Vec::new();
    for f in &fresh {
        let mut st = f.open();
        assert_eq!(st.schema_version().unwrap(), SCHEMA_VERSION, "{}", f.name);
        assert!(!st.has_builds().unwrap(), "{}: a fresh store has no build", f.name);
        fill(&mut st);
        assert!(st.has_builds().unwrap(), "{}: builds written", f.name);
        // Writing everything again changes nothing (idempotent upserts).
        let digest = st.content_digest().unwrap();
        fill(&mut st);
        assert_eq!(st.content_digest().unwrap(), digest, "{}: a second identical write changed the store", f.name);
        let r = reads(&mut st);
        assert!(r[0].contains("FAILURE") && r.iter().any(|x| x.contains("timed out\\nwaiting")), "{}", f.name);
        // Where TestGrid shows a build's job reads back as written.
        let placed = st.build_index().unwrap().into_iter().filter(|b| b.record.testgrid.is_some()).count();
        assert!(placed > 0 && r[0].contains("sig-release-master-blocking"), "{}: testgrid places", f.name);
        // The newest cached answer for an API path is found under any base URL.
        let (url, _) = st.http_cache_get_by_suffix("/repos/kubernetes/kubernetes/pulls/1").unwrap().expect("found");
        assert_eq!(url, "https://api.github.com/repos/kubernetes/kubernetes/pulls/1", "{}", f.name);
        assert!(st.http_cache_get_by_suffix("/repos/kubernetes/kubernetes/pulls/2").unwrap().is_none());
        assert!(st.http_cache_get_by_suffix("pulls/1").unwrap().is_none(), "a suffix starts with /");
        // Artifacts listed twice keep their last size; duplicate cluster members are stored once.
        assert_eq!(st.build_counts().unwrap(), (18, 54, 36), "{}", f.name);
        // What each build ran with reads back by build, sorted by file and key.
        let ids: Vec<i64> = st.build_index().unwrap().iter().map(|b| b.id).collect();
        let versions = st.build_versions(&ids).unwrap();
        assert_eq!(versions.len(), 9, "{}: the failed builds carry versions", f.name);
        assert!(versions.values().all(|v| v.len() == 2 && v[0].file == "finished.json"), "{}", f.name);
        assert!(r.last().unwrap().contains("kubekins-e2e:v20261115-master"), "{}", f.name);
        assert_eq!(st.cluster_failures("default", "c1", 10).unwrap().len(), 2, "{}", f.name);
        assert_eq!(st.cluster_daily("default").unwrap()[0].failures, 3, "{}", f.name);
        assert_eq!(st.cluster_first_ids("default").unwrap().len(), 2, "{}", f.name);
        let subs = st.cluster_subpatterns("default", "c1").unwrap();
        assert_eq!(
            subs.iter().map(|s| (s.label.as_str(), s.failures)).collect::<Vec<_>>(),
            [("b", 2), ("timed out <*>", 2)]
        );
        seen.push((f.name.to_string(), digest, r));
    }
    for w in seen.windows(2) {
        for (a, b) in w[0].2.iter().zip(&w[1].2) {
            assert_eq!(a, b, "{} and {} read differently", w[0].0, w[1].0);
        }
        assert_eq!(w[0].1, w[1].1, "{} and {} have different digests", w[0].0, w[1].0);
    }
}

#[test]
fn both_engines_have_the_same_tables_and_columns() {
    let fresh = common::backends("both_engines_have_the_same_tables_and_columns");
    let mut schemas = Vec::new();
    for f in &fresh {
        let st = f.open();
        let tables = st.tables().unwrap();
        let mut canonical = citriage_store::canonical_tables();
        canonical.sort();
        let mut sorted = tables.clone();
        sorted.sort();
        assert_eq!(sorted, canonical, "{}: every table needs a canonical digest query", f.name);
        // Referenced tables come first.
        let pos = |t: &str| tables.iter().position(|x| x == t).unwrap();
        assert!(pos("builds") < pos("test_results") && pos("snapshots") < pos("snapshot_jobs"), "{}", f.name);
        assert!(pos("snapshot_jobs") < pos("snapshot_test_flakes"), "{}", f.name);
        let cols: Vec<(String, Vec<String>)> = tables.iter().map(|t| (t.clone(), st.columns(t).unwrap())).collect();
        schemas.push((f.name, cols));
    }
    for w in schemas.windows(2) {
        let a: BTreeMap<_, _> = w[0].1.iter().cloned().collect();
        let b: BTreeMap<_, _> = w[1].1.iter().cloned().collect();
        assert_eq!(a, b, "{} and {} differ", w[0].0, w[1].0);
    }
}

/// The work of one writer: a share of the builds (overlapping the others'), the
/// snapshots, a document, evidence.
fn work(st: &mut Store, writer: usize, writers: usize) {
    for (i, job) in JOBS.iter().enumerate() {
        // Every writer writes every other build, starting at its own offset, in its
        // own order: each build is written by several writers.
        let mut ns: Vec<u32> = (0..12u32).filter(|n| (*n as usize + writer).is_multiple_of(2)).collect();
        if writer % 2 == 1 {
            ns.reverse();
        }
        for n in ns {
            st.put_build(&build(job, n + 20 * i as u32)).unwrap();
        }
    }
    st.import_snapshot(&snapshot("2026-11-20", &JOBS), "same").unwrap();
    st.import_snapshot(&snapshot(&format!("2026-11-{:02}", 10 + writer % writers), &JOBS[..2]), "same").unwrap();
    st.put_document(&Document {
        kind: "verify".into(),
        key: format!("w{writer}"),
        media_type: "application/json".into(),
        title: "v".into(),
        as_of: "2026-11-21".into(),
        body: "{}".into(),
    })
    .unwrap();
    let ev = Evidence::new(EvidenceKind::BuildResult, "gs://b/logs/x/1", "result=FAILURE", "", "2026-11-21");
    st.record_evidence(&[ev], "2026-11-21T10:00:00Z").unwrap();
}

#[test]
fn concurrent_writers_leave_the_same_store_as_one_writer() {
    const WRITERS: usize = 6;
    for seq in common::backends("concurrent_writers_leave_the_same_store_as_one_writer") {
        // One writer after the other.
        for w in 0..WRITERS {
            work(&mut seq.open(), w, WRITERS);
        }
        let want = seq.open().content_digest().unwrap();
        // All at once, on a store nobody has opened yet (they race on its migrations too).
        let conc = if seq.name == "sqlite" { common::sqlite() } else { common::postgres().unwrap() };
        std::thread::scope(|s| {
            for w in 0..WRITERS {
                let loc = conc.location.clone();
                s.spawn(move || {
                    let mut st = loc.open().unwrap_or_else(|e| panic!("writer {w}: {e}"));
                    work(&mut st, w, WRITERS);
                });
            }
        });
        let got = conc.open();
        assert_eq!(got.schema_version().unwrap(), SCHEMA_VERSION);
        assert_eq!(got.content_digest().unwrap(), want, "{}: concurrent writers differ from one writer", seq.name);
        assert_eq!(got.build_counts().unwrap().0, 36, "{}", seq.name);
    }
}

#[test]
fn an_interned_id_learnt_before_another_writer_stays_valid() {
    for f in common::backends("an_interned_id_learnt_before_another_writer_stays_valid") {
        let mut a = f.open();
        let mut b = f.open();
        // Both load their caches of interned strings.
        a.put_build(&build(JOBS[0], 0)).unwrap();
        b.put_build(&build(JOBS[1], 0)).unwrap();
        // `a` stores new names; `b`, whose cache predates them, stores the same names.
        let mut x = build(JOBS[0], 1);
        x.tests[0].name = "[sig-new] brand new".into();
        let mut y = build(JOBS[1], 1);
        y.tests[0].name = "[sig-new] brand new".into();
        a.put_build(&x).unwrap();
        b.put_build(&y).unwrap();
        // Each reads what the other wrote, names included.
        let got = a.job_builds_with_tests(JOBS[1], None).unwrap();
        assert_eq!(got[1].tests[0].name, "[sig-new] brand new", "{}", f.name);
        let got = b.job_builds_with_tests(JOBS[0], None).unwrap();
        assert_eq!(got[1].tests[0].name, "[sig-new] brand new", "{}", f.name);
        let mut names = Vec::new();
        a.for_each_failure_text(None, |_, _, n, _| names.push(n.to_string())).unwrap();
        assert!(names.iter().all(|n| !n.is_empty()), "{}: {names:?}", f.name);
    }
}

#[test]
fn a_store_copies_to_the_other_engine_and_back_unchanged() {
    let Ok(pg) = common::postgres()
        .map_err(|e| eprintln!("a_store_copies_to_the_other_engine_and_back_unchanged: skipped: {e}"))
    else {
        return;
    };
    let src = common::sqlite();
    let mut a = src.open();
    fill(&mut a);
    let want = a.content_digest().unwrap();
    let mut b = pg.open();
    let mut heard = Vec::new();
    let report = a.copy_into(&mut b, &mut |t, n| heard.push((t.to_string(), n))).unwrap();
    assert!(report.tables.iter().any(|t| t.table == "test_results" && t.rows == 54), "{report:?}");
    assert!(heard.iter().any(|(t, _)| t == "builds"));
    assert_eq!(b.content_digest().unwrap(), want, "copied into PostgreSQL");
    assert_eq!(
        b.table_counts().unwrap().iter().map(|t| t.rows).sum::<u64>(),
        a.table_counts().unwrap().iter().map(|t| t.rows).sum::<u64>()
    );
    // A copy goes only into an empty store.
    let e = a.copy_into(&mut b, &mut |_, _| {}).expect_err("refused").to_string();
    assert!(e.contains("not empty"), "{e}");
    // Ids continue after the copied ones: new builds, strings and snapshots go in.
    let mut extra = build("ci-new-job", 1);
    extra.tests[0].name = "[sig-new] after the copy".into();
    b.put_build(&extra).unwrap();
    b.import_snapshot(&snapshot("2026-11-22", &JOBS), "t").unwrap();
    a.put_build(&extra).unwrap();
    a.import_snapshot(&snapshot("2026-11-22", &JOBS), "t").unwrap();
    let want = a.content_digest().unwrap();
    assert_eq!(b.content_digest().unwrap(), want);
    // And back into a new SQLite file.
    let back = common::sqlite();
    let mut c = back.open();
    b.copy_into(&mut c, &mut |_, _| {}).unwrap();
    assert_eq!(c.content_digest().unwrap(), want, "copied back into SQLite");
    assert_eq!(reads(&mut c), reads(&mut a));
}

#[test]
fn a_change_by_another_connection_moves_the_data_version() {
    for f in common::backends("a_change_by_another_connection_moves_the_data_version") {
        let mut w = f.open();
        w.put_build(&build(JOBS[0], 0)).unwrap();
        let watcher = f.open();
        let v0 = watcher.data_version().unwrap();
        // Reads do not move it.
        let _ = watcher.build_index().unwrap();
        let _ = w.build_index().unwrap();
        assert_eq!(watcher.data_version().unwrap(), v0, "{}: a read moved the data version", f.name);
        w.put_build(&build(JOBS[0], 1)).unwrap();
        // The notification may take a moment to arrive.
        let t = std::time::Instant::now();
        while watcher.data_version().unwrap() == v0 && t.elapsed().as_secs() < 5 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_ne!(watcher.data_version().unwrap(), v0, "{}: a commit did not move the data version", f.name);
    }
}

#[test]
#[cfg(feature = "postgres")]
fn postgres_connections_are_pooled_and_passwords_never_printed() {
    let Ok(f) = common::postgres().map_err(|e| eprintln!("postgres_connections_are_pooled: skipped: {e}")) else {
        return;
    };
    let Location::Postgres(url) = &f.location else { unreachable!() };
    for _ in 0..20 {
        let st = f.open();
        let _ = st.list_snapshots(None).unwrap();
    }
    // Twenty opens in turn used one connection, kept open for the next.
    let open = common::cluster().unwrap().connections(url).unwrap();
    assert_eq!(open, 1, "connections open after 20 opens in turn");
    let held: Vec<Store> = (0..3).map(|_| f.open()).collect();
    assert_eq!(common::cluster().unwrap().connections(url).unwrap(), 3);
    drop(held);
    // A password in the URL is never printed: not in the location, not in errors.
    let with_password = url.replace("postgres@", "postgres:s3cr3t@");
    let loc = Location::parse(&with_password);
    assert!(!loc.to_string().contains("s3cr3t") && loc.to_string().contains("***"), "{loc}");
    assert!(!format!("{loc:?}").contains("s3cr3t"));
    let bad = Location::parse("postgres://u:s3cr3t@127.0.0.1:1/none?connect_timeout=2");
    let e = bad.open().err().expect("no server there").to_string();
    assert!(!e.contains("s3cr3t") && e.contains("***"), "{e}");
    let st = loc.open().unwrap();
    assert!(!st.path().contains("s3cr3t"));
}

#[test]
fn locations_parse_urls_and_files() {
    assert_eq!(Location::parse("postgres://h/db").backend(), citriage_store::Backend::Postgres);
    assert_eq!(Location::parse("PostgreSQL://h/db").backend(), citriage_store::Backend::Postgres);
    assert_eq!(Location::parse("sqlite:/var/lib/c.db"), Location::Sqlite("/var/lib/c.db".into()));
    assert_eq!(Location::parse("c.db"), Location::Sqlite("c.db".into()));
    assert_eq!(
        Location::parse("postgresql://me:pw@db.example:5432/ci?sslmode=disable&password=x").to_string(),
        "postgresql://me:***@db.example:5432/ci?sslmode=disable&password=***"
    );
    #[cfg(not(feature = "postgres"))]
    {
        let e = Location::parse("postgres://h/db").open().err().unwrap();
        assert!(e.is_bad_input() && e.to_string().contains("without PostgreSQL support"), "{e}");
    }
}

#[test]
fn one_worker_at_a_time_holds_a_source_and_its_status_is_kept() {
    use citriage_store::Attempt;
    for f in common::backends("one_worker_at_a_time_holds_a_source_and_its_status_is_kept") {
        let mut a = f.open();
        let mut b = f.open();
        assert!(a.claim_source("k8s", "bucket", "w1", 1000, 60).unwrap(), "{}", f.name);
        assert!(!b.claim_source("k8s", "bucket", "w2", 1010, 60).unwrap(), "{}: held by w1", f.name);
        assert!(b.claim_source("k8s", "bucket", "w1", 1020, 60).unwrap(), "{}: w1 takes its own lease back", f.name);
        assert!(!b
            .finish_source("k8s", "w2", 1030, &Attempt::Ok { builds_stored: 1, newest_started: None, next_due: 0 })
            .unwrap());
        let ok = Attempt::Ok { builds_stored: 5, newest_started: Some(900), next_due: 1900 };
        assert!(a.finish_source("k8s", "w1", 1040, &ok).unwrap(), "{}", f.name);
        assert!(b.claim_source("k8s", "bucket", "w2", 1050, 60).unwrap(), "{}: released", f.name);
        let failed = Attempt::Failed { error: "503 from storage".into(), builds_stored: 2, next_due: 1110 };
        assert!(b.finish_source("k8s", "w2", 1050, &failed).unwrap());
        // An expired lease is taken over.
        assert!(a.claim_source("k8s", "bucket", "w1", 2000, 60).unwrap());
        assert!(b.claim_source("k8s", "bucket", "w2", 2061, 60).unwrap(), "{}: expired", f.name);
        let s = a.source_statuses().unwrap();
        assert_eq!(s.len(), 1);
        let s = &s[0];
        assert_eq!((s.source.as_str(), s.kind.as_str()), ("k8s", "bucket"));
        assert_eq!(s.lease_holder.as_deref(), Some("w2"));
        assert_eq!((s.last_success, s.last_error_at, s.last_attempt), (Some(1040), Some(1050), Some(1050)));
        assert_eq!(s.last_error.as_deref(), Some("503 from storage"));
        assert_eq!((s.failures, s.next_due, s.ticks, s.errors, s.builds_stored), (1, 1110, 2, 1, 7));
        assert_eq!(s.newest_started, Some(900));
    }
}

#[test]
fn retention_removes_old_builds_with_their_rows_and_old_excerpts() {
    for f in common::backends("retention_removes_old_builds_with_their_rows_and_old_excerpts") {
        let mut st = f.open();
        for n in 1..=12 {
            st.put_build(&build("ci-a", n)).unwrap();
        }
        let rows = |st: &Store, t: &str| st.table_counts().unwrap().into_iter().find(|c| c.table == t).unwrap().rows;
        let newest = st.newest_build_started(None).unwrap().unwrap();
        assert_eq!(newest, 1_700_000_000 + 11 * 3600, "{}", f.name);
        assert_eq!(st.newest_build_started(Some("another-bucket")).unwrap(), None);
        let (builds0, tests0, excerpts0) =
            (rows(&st, "builds"), rows(&st, "test_results"), rows(&st, "build_excerpts"));
        // Builds start at hour n (none when n is a multiple of 3). Keep builds of the
        // last 5 hours (6 and later: 1, 2, 4, 5 go) and excerpts of the last 2 (9 and
        // later: build 8's go, build 7 passed and has none).
        let (builds, excerpts) = st.prune(newest - 5 * 3600, newest - 2 * 3600).unwrap();
        assert_eq!(builds, 4, "{}", f.name);
        assert!(excerpts > 0, "{}", f.name);
        assert_eq!(rows(&st, "builds"), builds0 - 4, "{}", f.name);
        assert_eq!(
            rows(&st, "test_results"),
            tests0 - 4 * (tests0 / builds0),
            "{}: results go with their builds",
            f.name
        );
        assert!(rows(&st, "build_excerpts") < excerpts0 - excerpts, "{}: builds 2 and 4 took theirs", f.name);
        // Builds 2 and 4 took their versions with them (6, 8, 10 and 12 keep theirs: two each).
        assert_eq!(rows(&st, "build_versions"), 8, "{}: versions go with their builds", f.name);
        let left = st.builds(None).unwrap();
        assert!(left.iter().all(|b| b.started.is_none_or(|t| t >= newest - 5 * 3600)), "{}", f.name);
        // Pruning again removes nothing.
        assert_eq!(st.prune(newest - 5 * 3600, newest - 2 * 3600).unwrap(), (0, 0), "{}", f.name);
    }
}

#[test]
fn a_build_written_again_replaces_its_versions() {
    for f in common::backends("a_build_written_again_replaces_its_versions") {
        let mut st = f.open();
        let mut b = build("ci-a", 2);
        st.put_build(&b).unwrap();
        let id = st.build_index().unwrap()[0].id;
        let tag = |st: &Store| {
            st.build_versions(&[id]).unwrap().get(&id).map(|v| v.iter().map(|x| x.value.clone()).collect::<Vec<_>>())
        };
        assert_eq!(tag(&st).unwrap()[1], "gcr.io/k8s-staging-test-infra/kubekins-e2e:v20261101-master", "{}", f.name);
        b.versions = versions("v20261115");
        // A repeated key keeps its first value rather than failing the write.
        b.versions.push(BuildVersion { value: "other".into(), ..b.versions[1].clone() });
        st.put_build(&b).unwrap();
        let id = st.build_index().unwrap()[0].id;
        let tag = |st: &Store| {
            st.build_versions(&[id]).unwrap().get(&id).map(|v| v.iter().map(|x| x.value.clone()).collect::<Vec<_>>())
        };
        assert_eq!(tag(&st).unwrap()[1], "gcr.io/k8s-staging-test-infra/kubekins-e2e:v20261115-master", "{}", f.name);
        b.versions.clear();
        st.put_build(&b).unwrap();
        let id = st.build_index().unwrap()[0].id;
        assert!(st.build_versions(&[id]).unwrap().is_empty(), "{}: a build read without versions keeps none", f.name);
    }
}
