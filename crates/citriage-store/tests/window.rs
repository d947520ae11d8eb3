//! The clustering's read and write paths on both engines: a window's failures read
//! through [`Store::window_failures`] are exactly those the job-by-job read of
//! every build with every test gives; a run recorded by build row id
//! ([`Store::record_cluster_run_at`], the membership written as a difference from the
//! previous run's) leaves the same store as the same run recorded on a fresh store by
//! bucket and path ([`Store::record_cluster_run`]).

mod common;

use citriage_model::build::{BuildRecord, StoredTest};
use citriage_store::{ClusterMember, ClusterRun, MemberAt, Store, StoredCluster};

fn test(name: &str, status: &str, text: Option<&str>, kettle: Option<&str>) -> StoredTest {
    StoredTest {
        file: "artifacts/junit_01.xml".into(),
        suite: "e2e".into(),
        classname: "e2e".into(),
        name: name.into(),
        status: status.into(),
        duration: Some(2.0),
        failure_text: text.map(str::to_string),
        attempt: 0,
        informing: false,
        kettle_name: kettle.map(str::to_string),
    }
}

/// Build `n` of a job: passing, failed (with and without a text), errored and
/// skipped results; some builds without a start time, some presubmits.
fn build(job: &str, n: u32) -> BuildRecord {
    let text = format!("timeout after {n}s\nat line {}", n % 3);
    BuildRecord {
        bucket: "kubernetes-ci-logs".into(),
        path: format!("logs/{job}/{}", 100 + n),
        job: job.into(),
        build_id: format!("{}", 100 + n),
        kind: if n.is_multiple_of(4) { "presubmit" } else { "periodic" }.into(),
        pr: n.is_multiple_of(4).then_some(u64::from(n) + 7),
        commit_sha: None,
        repo_commit: None,
        repo_version: None,
        repos: None,
        started: (!n.is_multiple_of(5)).then_some(1_700_000_000 + i64::from(n % 7) * 86_400),
        finished: None,
        duration: Some(600 + i64::from(n)),
        result: Some("FAILURE".into()),
        state: None,
        executor: n.is_multiple_of(2).then(|| "gcs".into()),
        origin: "gcs".into(),
        problems: Vec::new(),
        complete: true,
        tests: vec![
            test("[sig-node] passes", "passed", None, None),
            test("[sig-network] skipped", "skipped", None, None),
            test("[sig-storage] mounts", "failed", Some(&text), Some("[sig-storage] mounts (kettle)")),
            test("[sig-apps] fails bare", "failed", None, None),
            test(&format!("[sig-apps] {job} errs {}", n % 2), "error", Some("panic: boom"), None),
            test("[sig-node] passes again", "passed", None, None),
        ],
        artifacts: Vec::new(),
        excerpts: Vec::new(),
        kettle: None,
        testgrid: None,
        versions: Vec::new(),
    }
}

const JOBS: [&str; 3] = ["ci-b", "ci-a", "pull-c"];

fn fill(st: &mut Store) {
    for job in JOBS {
        for n in 0..12 {
            st.put_build(&build(job, n)).unwrap();
        }
    }
}

/// (build, started, stored tests, failures as (seq, name, kettle name, text)) per
/// window build, read the old way: every job's builds with all their tests.
type Seen = Vec<(String, Option<i64>, u32, Vec<(u32, String, Option<String>, String)>)>;

fn old_read(st: &mut Store, since: i64, until: i64) -> Seen {
    let mut out = Seen::new();
    for job in st.build_jobs().unwrap() {
        for b in st.job_builds_with_tests(&job, Some(since)).unwrap() {
            if !b.started.is_some_and(|s| s > since && s <= until) {
                continue;
            }
            let failures = b
                .tests
                .iter()
                .enumerate()
                .filter(|(_, t)| (t.status == "failed" || t.status == "error") && t.failure_text.is_some())
                .map(|(i, t)| (i as u32, t.name.clone(), t.kettle_name.clone(), t.failure_text.clone().unwrap()))
                .collect();
            out.push((format!("{}/{}", b.bucket, b.path), b.started, b.tests.len() as u32, failures));
        }
    }
    out
}

fn new_read(st: &mut Store, since: i64, until: i64) -> Seen {
    let mut out = Seen::new();
    let w = st.window_failures(since, until, &|_| true).unwrap();
    for (i, wb) in w.builds.iter().enumerate() {
        let f =
            w.failures.iter().filter(|f| f.build as usize == i).map(|f| {
                (f.seq, f.name.to_string(), f.kettle_name.as_ref().map(|k| k.to_string()), f.text.to_string())
            });
        out.push((format!("{}/{}", wb.bucket, wb.path), wb.started, wb.stored_tests, f.collect()));
    }
    // By build, then position.
    assert!(w.failures.windows(2).all(|p| (p[0].build, p[0].seq) < (p[1].build, p[1].seq)));
    out
}

#[test]
fn a_window_read_for_clustering_matches_the_full_read() {
    for f in common::backends("a_window_read_for_clustering_matches_the_full_read") {
        let mut st = f.open();
        fill(&mut st);
        for (since, until) in [(0, i64::MAX), (1_700_000_000, 1_700_000_000 + 3 * 86_400), (1_800_000_000, i64::MAX)] {
            let old = old_read(&mut st, since, until);
            let new = new_read(&mut st, since, until);
            assert_eq!(new, old, "{}: window ({since}, {until}]", f.name);
            if since == 0 {
                assert!(old.len() > 20 && old.iter().all(|b| b.2 == 5 && b.3.len() == 2), "{}: {old:?}", f.name);
            }
        }
        // The builds `keep` refuses are left out, the others keep their order.
        let kept: Vec<String> = st
            .window_failures(0, i64::MAX, &|b| b.kind == "presubmit")
            .unwrap()
            .builds
            .into_iter()
            .map(|b| b.path.to_string())
            .collect();
        let all: Vec<String> = new_read(&mut st, 0, i64::MAX).into_iter().map(|b| b.0).collect();
        assert!(!kept.is_empty() && kept.len() < all.len(), "{}", f.name);
        let presubmits: Vec<String> =
            all.iter().filter(|p| kept.iter().any(|k| p.ends_with(k.as_str()))).cloned().collect();
        assert_eq!(presubmits.len(), kept.len(), "{}", f.name);
        // Start times as the default as-of reads them.
        let (starts, n) = st.build_starts().unwrap();
        assert_eq!(n, 36, "{}", f.name);
        let listed: Vec<i64> = st.builds(None).unwrap().iter().filter_map(|b| b.started).collect();
        assert_eq!(starts, listed, "{}", f.name);
    }
}

fn cluster(id: &str, size: u64) -> StoredCluster {
    StoredCluster {
        stable_id: id.into(),
        key: format!("key {id}"),
        k8s_id: format!("k-{id}"),
        size,
        first_seen: 1_700_000_000,
        last_seen: 1_700_500_000,
        text: "timeout".into(),
        spans: vec![7],
        owner: "storage".into(),
        signatures: Vec::new(),
        tests: 1,
        jobs: 1,
        run_as_of: 1_700_600_000,
    }
}

/// The membership, first ids, runs and clusters of a profile, as text.
fn run_state(st: &Store) -> String {
    let mut members = Vec::new();
    for c in st.clusters("default").unwrap() {
        members.push((c.stable_id.clone(), st.cluster_member_rows("default", &c.stable_id).unwrap()));
    }
    format!(
        "{members:?}\n{:?}\n{:?}\n{:?}\n{:?}",
        st.cluster_first_ids("default").unwrap(),
        st.cluster_run("default").unwrap(),
        st.clusters("default").unwrap(),
        st.cluster_daily("default").unwrap()
    )
}

#[test]
fn a_run_recorded_by_row_id_as_a_difference_equals_a_fresh_recording() {
    for f in common::backends("a_run_recorded_by_row_id_as_a_difference_equals_a_fresh_recording") {
        let mut st = f.open();
        fill(&mut st);
        let index = st.build_index().unwrap();
        let ids: Vec<(i64, String)> = index.iter().map(|b| (b.id, b.record.path.clone())).collect();
        let run = |n: u64| ClusterRun {
            profile: "default".into(),
            as_of: 1_700_600_000,
            window_days: 14,
            failures: n,
            clusters: 2,
        };
        // Run 1: builds 0..20 in c1/c2 by parity; run 2: builds 10..30, some moved to c3.
        let members = |from: usize, to: usize, moved: bool| -> Vec<(String, usize, u32)> {
            (from..to)
                .flat_map(|i| {
                    let sid = if moved && i % 3 == 0 {
                        "c3"
                    } else if i % 2 == 0 {
                        "c1"
                    } else {
                        "c2"
                    };
                    [(sid.to_string(), i, 2u32), ("c2".to_string(), i, 4u32)]
                })
                .collect()
        };
        let record = |st: &mut Store, m: &[(String, usize, u32)], n: u64| {
            let at: Vec<MemberAt<'_>> =
                m.iter().map(|(s, i, seq)| MemberAt { stable_id: s, build: ids[*i].0, seq: *seq }).collect();
            st.record_cluster_run_at(&run(n), &[cluster("c1", 1), cluster("c2", 2), cluster("c3", 3)], &at, &[])
                .unwrap();
        };
        record(&mut st, &members(0, 20, false), 40);
        let second = members(10, 30, true);
        record(&mut st, &second, 40);
        // The same two runs recorded the old way (by bucket and path) on a fresh store.
        let g = common::sqlite();
        let mut fresh = g.open();
        fill(&mut fresh);
        let by_path = |m: &[(String, usize, u32)]| -> Vec<ClusterMember> {
            m.iter()
                .map(|(s, i, seq)| ClusterMember {
                    stable_id: s.clone(),
                    bucket: "kubernetes-ci-logs".into(),
                    path: ids[*i].1.clone(),
                    seq: *seq,
                })
                .collect()
        };
        let clusters = [cluster("c1", 1), cluster("c2", 2), cluster("c3", 3)];
        assert_eq!(fresh.record_cluster_run(&run(40), &clusters, &by_path(&members(0, 20, false)), &[]).unwrap(), 0);
        assert_eq!(fresh.record_cluster_run(&run(40), &clusters, &by_path(&second), &[]).unwrap(), 0);
        // Row ids of the same writes are the same on both stores, so the states compare.
        assert_eq!(run_state(&st), run_state(&fresh), "{}", f.name);
        // The second run's membership is exactly its members; first ids kept from run 1.
        let c3 = st.cluster_member_rows("default", "c3").unwrap();
        assert_eq!(c3.len(), second.iter().filter(|m| m.0 == "c3").count(), "{}", f.name);
        let first = st.cluster_first_ids("default").unwrap();
        assert_eq!(first.len(), 60, "{}: 20 builds × 2 then 10 new builds × 2", f.name);
        // Failures of builds 10..20 moved to c3 in run 2 keep the id run 1 gave them.
        let index_of = |path: &str| ids.iter().position(|(_, p)| p == path).unwrap();
        let c3_first: Vec<usize> = first.iter().filter(|x| x.stable_id == "c3").map(|x| index_of(&x.path)).collect();
        assert!(!c3_first.is_empty() && c3_first.iter().all(|i| *i >= 20), "{}: {c3_first:?}", f.name);
        let at = st.cluster_first_ids_at("default").unwrap();
        assert_eq!(at.len(), first.len(), "{}", f.name);
        // A run that moves most rows replaces the membership whole, with the same result.
        let third = members(20, 36, false);
        record(&mut st, &third, 32);
        fresh.record_cluster_run(&run(32), &clusters, &by_path(&third), &[]).unwrap();
        assert_eq!(run_state(&st), run_state(&fresh), "{}: third run", f.name);
    }
}
