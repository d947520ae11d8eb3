//! Triage records on both engines: records, links and transitions read back as
//! written (equal content digests on SQLite and PostgreSQL); a transition written
//! against a version that moved is refused with the record as it is now; workers
//! changing one record at once lose no transition and write none twice; links are
//! never deleted; bad requests are refused with a clear message and change nothing.

mod common;

use citriage_model::{Evidence, EvidenceKind};
use citriage_store::{
    LinkSource, LinkWrite, NewLink, NewTransition, RecordWrite, RefFacts, Store, Subject, RECORD_STATES,
};

fn pattern(id: &str) -> Subject {
    Subject::Pattern { profile: "citriage".into(), id: id.into() }
}

fn build_evidence(n: u32) -> Evidence {
    Evidence::new(
        EvidenceKind::BuildResult,
        format!("gs://kubernetes-ci-logs/logs/ci-kubernetes-e2e-gce/{}", 1000 + n),
        format!("FAILURE started {n}"),
        "sha",
        "2026-11-20",
    )
}

fn link(reference: &str, source: LinkSource, at: i64) -> NewLink {
    NewLink {
        reference: reference.into(),
        source,
        linked_by: "alice".into(),
        linked_at: at,
        facts: RefFacts { ref_kind: "pr".into(), ref_state: "open".into(), read_at: Some(at), ..RefFacts::default() },
        note: String::new(),
    }
}

fn step(from: &str, to: &str, at: i64, ev: Vec<Evidence>, reason: &str) -> NewTransition {
    NewTransition { from: from.into(), to: to.into(), at, evidence: ev, reason: reason.into() }
}

/// A record's life written through the interface.
fn fill(st: &mut Store) {
    let s = pattern("c31e0a");
    let r = st.ensure_record(&s, "timed out waiting for the condition", 1_000).unwrap();
    assert_eq!((r.state.as_str(), r.version, r.since), ("new", 0, 1_000));
    // Ensuring again changes nothing.
    assert_eq!(st.ensure_record(&s, "another title", 2_000).unwrap(), r);
    assert_eq!(
        st.link_record(&s.key(), &link("kubernetes/kubernetes#135000", LinkSource::Github, 1_100)).unwrap(),
        LinkWrite::Done { version: 1 }
    );
    let w = st
        .apply_record_transitions(
            &s.key(),
            1,
            &[step("new", "triaged", 1_100, vec![build_evidence(1)], "kubernetes/kubernetes#135000 linked")],
            1_200,
        )
        .unwrap();
    assert_eq!(w, RecordWrite::Applied { version: 2, seqs: vec![1] });
    let merged = RefFacts {
        ref_kind: "pr".into(),
        ref_state: "merged".into(),
        merged_at: Some(1_500),
        merge_commit: Some("ab".repeat(20)),
        base_branch: Some("master".into()),
        read_at: Some(1_600),
    };
    assert_eq!(
        st.set_link_facts(&s.key(), "kubernetes/kubernetes#135000", &merged).unwrap(),
        LinkWrite::Done { version: 3 }
    );
    // The same facts again change nothing.
    assert_eq!(
        st.set_link_facts(&s.key(), "kubernetes/kubernetes#135000", &merged).unwrap(),
        LinkWrite::Unchanged { version: 3 }
    );
    let w = st
        .apply_record_transitions(
            &s.key(),
            3,
            &[
                step("triaged", "fix-merged", 1_500, vec![build_evidence(2)], "#135000 merged"),
                step("fix-merged", "failed-after-fix", 1_800, vec![build_evidence(3), build_evidence(2)], "failed"),
            ],
            1_900,
        )
        .unwrap();
    assert_eq!(w, RecordWrite::Applied { version: 4, seqs: vec![2, 3] });
    // A job record and a payload record, one unlinked reference.
    let j = Subject::Job { job: "pr:pull-kubernetes-e2e-kind".into() };
    st.ensure_record(&j, "", 500).unwrap();
    st.link_record(&j.key(), &link("kubernetes/test-infra#9", LinkSource::Hand, 600)).unwrap();
    assert_eq!(
        st.unlink_record(&j.key(), "kubernetes/test-infra#9", "bob", 700).unwrap(),
        LinkWrite::Done { version: 2 }
    );
    st.ensure_record(&Subject::Payload { cause: "4.22/etcd-quorum".into() }, "etcd lost quorum", 800).unwrap();
}

#[test]
fn records_read_back_as_written_on_both_engines() {
    let mut digests = Vec::new();
    for f in common::backends("records_read_back_as_written_on_both_engines") {
        let mut st = f.open();
        fill(&mut st);
        let key = pattern("c31e0a").key();
        let r = st.record(&key).unwrap().unwrap();
        assert_eq!((r.state.as_str(), r.since, r.version), ("failed-after-fix", 1_800, 4), "{}", f.name);
        let t = st.record_transitions(&key).unwrap();
        let chain: Vec<(i64, &str, &str, i64)> =
            t.iter().map(|t| (t.seq, t.from.as_str(), t.to.as_str(), t.at)).collect();
        assert_eq!(
            chain,
            [
                (1, "new", "triaged", 1_100),
                (2, "triaged", "fix-merged", 1_500),
                (3, "fix-merged", "failed-after-fix", 1_800)
            ],
            "{}",
            f.name
        );
        // Evidence ids are sorted, without repeats, and resolve in the ledger.
        let mut want = vec![build_evidence(3).id, build_evidence(2).id];
        want.sort();
        assert_eq!(t[2].evidence, want, "{}", f.name);
        for id in t.iter().flat_map(|t| &t.evidence) {
            assert!(st.evidence(id).unwrap().is_some(), "{}: {id} does not resolve", f.name);
        }
        let links = st.record_links(&key).unwrap();
        assert_eq!(links.len(), 1);
        assert_eq!(links[0].facts.merged_at, Some(1_500));
        assert!(links[0].active());
        // The unlinked reference is kept, stamped.
        let jl = st.record_links("job:pr:pull-kubernetes-e2e-kind").unwrap();
        assert_eq!((jl[0].unlinked_at, jl[0].unlinked_by.as_deref()), (Some(700), Some("bob")), "{}", f.name);
        // Linking it again makes a second row; the first stays.
        st.link_record("job:pr:pull-kubernetes-e2e-kind", &link("kubernetes/test-infra#9", LinkSource::Hand, 900))
            .unwrap();
        let jl = st.record_links("job:pr:pull-kubernetes-e2e-kind").unwrap();
        assert_eq!(jl.iter().map(|l| (l.n, l.active())).collect::<Vec<_>>(), [(0, false), (1, true)], "{}", f.name);
        // The history an alerting module reads: by recording time.
        let h = st.record_history(1_500).unwrap();
        assert_eq!(h.iter().map(|t| t.seq).collect::<Vec<_>>(), [2, 3], "{}", f.name);
        assert_eq!(st.records(Some("failed-after-fix")).unwrap().len(), 1);
        assert_eq!(st.records(None).unwrap().len(), 3);
        digests.push((f.name, st.content_digest().unwrap()));
    }
    if let [(_, a), (_, b)] = &digests[..] {
        assert_eq!(a, b, "both engines hold the same records");
    }
}

#[test]
fn bad_requests_are_refused_and_change_nothing() {
    for f in common::backends("bad_requests_are_refused_and_change_nothing") {
        let mut st = f.open();
        fill(&mut st);
        let key = pattern("c31e0a").key();
        let before = st.content_digest().unwrap();
        // A record that is not stored.
        assert_eq!(
            st.link_record("pattern:citriage/unknown", &link("o/r#1", LinkSource::Hand, 1)).unwrap(),
            LinkWrite::Missing
        );
        assert_eq!(st.unlink_record("pattern:citriage/unknown", "o/r#1", "x", 1).unwrap(), LinkWrite::Missing);
        assert_eq!(
            st.apply_record_transitions("pattern:citriage/unknown", 0, &[step("new", "triaged", 1, vec![], "")], 1)
                .unwrap(),
            RecordWrite::Missing
        );
        // A stale version: refused with the record as it is.
        match st.apply_record_transitions(&key, 1, &[step("failed-after-fix", "fix-merged", 2_000, vec![], "")], 2_000)
        {
            Ok(RecordWrite::Conflict { found }) => assert_eq!(found.version, 4, "{}", f.name),
            other => panic!("{}: {other:?}", f.name),
        }
        // A transition that does not start from the stored state, or to no state.
        let e = st.apply_record_transitions(&key, 4, &[step("new", "triaged", 2_000, vec![], "")], 2_000).unwrap_err();
        assert!(e.to_string().contains("follows state \"failed-after-fix\""), "{}: {e}", f.name);
        let e = st.apply_record_transitions(&key, 4, &[step("failed-after-fix", "done", 2_000, vec![], "")], 2_000);
        assert!(e.unwrap_err().to_string().contains("\"done\" is not a record state"), "{}", f.name);
        // Linking what is linked, unlinking what is not.
        assert_eq!(
            st.link_record(&key, &link("kubernetes/kubernetes#135000", LinkSource::Hand, 3_000)).unwrap(),
            LinkWrite::Unchanged { version: 4 }
        );
        assert_eq!(st.unlink_record(&key, "o/r#404", "x", 3_000).unwrap(), LinkWrite::Unchanged { version: 4 });
        assert_eq!(st.content_digest().unwrap(), before, "{}: a refused request changed the store", f.name);
        assert!(Subject::parse("pattern:citriage").is_none() && Subject::parse("bogus:x").is_none());
        assert_eq!(Subject::parse(&key), Some(pattern("c31e0a")));
        assert_eq!(
            Subject::parse("job:pr:pull-kubernetes-e2e-kind"),
            Some(Subject::Job { job: "pr:pull-kubernetes-e2e-kind".into() })
        );
    }
}

/// The next state of the cycle the workers drive a record through.
fn next(state: &str) -> &'static str {
    let i = RECORD_STATES.iter().position(|s| *s == state).unwrap();
    RECORD_STATES[(i + 1) % RECORD_STATES.len()]
}

#[test]
fn workers_changing_one_record_at_once_lose_nothing() {
    const WORKERS: usize = 4;
    const EACH: usize = 12;
    for f in common::backends("workers_changing_one_record_at_once_lose_nothing") {
        let key = {
            let mut st = f.open();
            st.ensure_record(&pattern("race"), "", 0).unwrap().subject
        };
        let conflicts = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for w in 0..WORKERS {
                let (f, key, conflicts) = (&f, &key, &conflicts);
                s.spawn(move || {
                    let mut st = f.open();
                    let mut done = 0;
                    let mut r = st.record(key).unwrap().unwrap();
                    while done < EACH {
                        // Decide from what was read, write conditionally, read again on a conflict.
                        let to = next(&r.state);
                        let t = step(&r.state, to, r.since + 1, vec![build_evidence(w as u32)], &format!("worker {w}"));
                        match st.apply_record_transitions(key, r.version, &[t], 10).unwrap() {
                            RecordWrite::Applied { version, .. } => {
                                done += 1;
                                r.state = to.to_string();
                                r.since += 1;
                                r.version = version;
                            }
                            RecordWrite::Conflict { found } => {
                                conflicts.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                                r = found;
                            }
                            RecordWrite::Missing => panic!("the record vanished"),
                        }
                        // Links from every worker at once, one reference shared by all.
                        if done == EACH / 2 {
                            st.link_record(key, &link(&format!("o/r#{}", w + 1), LinkSource::Hand, 5)).unwrap();
                            st.link_record(key, &link("o/r#100", LinkSource::Github, 5)).unwrap();
                            r = st.record(key).unwrap().unwrap();
                        }
                    }
                });
            }
        });
        let st = f.open();
        let t = st.record_transitions(&key).unwrap();
        assert_eq!(t.len(), WORKERS * EACH, "{}: every transition is kept once", f.name);
        let mut state = "new".to_string();
        for (i, t) in t.iter().enumerate() {
            assert_eq!(t.seq, i as i64 + 1, "{}", f.name);
            assert_eq!(t.from, state, "{}: transition {} does not follow the one before", f.name, t.seq);
            state = t.to.clone();
        }
        let r = st.record(&key).unwrap().unwrap();
        assert_eq!(r.state, state, "{}", f.name);
        // One version per transition, per link written (the shared reference once).
        assert_eq!(r.version, (WORKERS * EACH + WORKERS + 1) as i64, "{}", f.name);
        let links = st.record_links(&key).unwrap();
        assert_eq!(links.len(), WORKERS + 1, "{}: {links:?}", f.name);
        eprintln!("{}: {} conflicts retried", f.name, conflicts.into_inner());
    }
}

fn a_build(job: &str, n: u32, failed: bool) -> citriage_model::build::BuildRecord {
    use citriage_model::build::{BuildRecord, StoredTest};
    BuildRecord {
        bucket: "kubernetes-ci-logs".into(),
        path: format!("logs/{job}/{n}"),
        job: job.into(),
        build_id: n.to_string(),
        kind: "periodic".into(),
        pr: None,
        commit_sha: None,
        repo_commit: Some(format!("{n:040x}")),
        repo_version: None,
        repos: Some(r#"{"kubernetes/kubernetes":"master"}"#.into()),
        started: Some(1_000 + i64::from(n)),
        finished: Some(2_000 + i64::from(n)),
        duration: Some(1_000),
        result: Some(if failed { "FAILURE" } else { "SUCCESS" }.into()),
        state: None,
        executor: None,
        origin: "gcs".into(),
        problems: Vec::new(),
        complete: true,
        tests: vec![StoredTest {
            file: "junit.xml".into(),
            suite: "s".into(),
            classname: "s".into(),
            name: "[sig-apps] rollover".into(),
            status: if failed { "failed" } else { "passed" }.into(),
            duration: None,
            failure_text: failed.then(|| "never reached revision 2".into()),
            attempt: 0,
            informing: false,
            kettle_name: None,
        }],
        artifacts: Vec::new(),
        excerpts: Vec::new(),
        kettle: None,
        testgrid: None,
        versions: Vec::new(),
    }
}

#[test]
fn a_patterns_runs_are_every_build_of_the_jobs_it_touched() {
    use citriage_store::{ClusterMember, ClusterRun, StoredCluster};
    for f in common::backends("a_patterns_runs_are_every_build_of_the_jobs_it_touched") {
        let mut st = f.open();
        for (job, n, failed) in [
            ("ci-a", 1, true),
            ("ci-a", 2, false),
            ("ci-a", 3, true),
            ("ci-b", 4, true),
            ("ci-b", 5, false),
            ("ci-c", 6, true),
        ] {
            st.put_build(&a_build(job, n, failed)).unwrap();
        }
        let member = |job: &str, n: u32| ClusterMember {
            stable_id: "c1".into(),
            bucket: "kubernetes-ci-logs".into(),
            path: format!("logs/{job}/{n}"),
            seq: 0,
        };
        let cluster = StoredCluster {
            stable_id: "c1".into(),
            key: "k".into(),
            k8s_id: "k".into(),
            size: 2,
            first_seen: 1_001,
            last_seen: 1_004,
            text: "never reached revision 2".into(),
            spans: Vec::new(),
            owner: String::new(),
            signatures: Vec::new(),
            tests: 1,
            jobs: 2,
            run_as_of: 3_000,
        };
        let run = ClusterRun { profile: "citriage".into(), as_of: 3_000, window_days: 14, failures: 2, clusters: 1 };
        st.record_cluster_run(&run, &[cluster], &[member("ci-a", 1), member("ci-b", 4)], &[]).unwrap();
        let runs = st.pattern_runs("citriage", "c1", 0).unwrap();
        let got: Vec<(&str, i64, bool)> = runs.iter().map(|r| (r.job.as_str(), r.started, r.hit)).collect();
        assert_eq!(
            got,
            [
                ("ci-a", 1_001, true),
                ("ci-a", 1_002, false),
                ("ci-a", 1_003, false),
                ("ci-b", 1_004, true),
                ("ci-b", 1_005, false)
            ],
            "{}: ci-a/3 failed otherwise (not clustered with c1); ci-c never had the pattern",
            f.name
        );
        assert_eq!(runs[0].repo_commit.as_deref(), Some(format!("{:040x}", 1).as_str()));
        assert_eq!(st.pattern_runs("citriage", "c1", 1_004).unwrap().len(), 2, "{}", f.name);
        assert!(st.pattern_runs("citriage", "nope", 0).unwrap().is_empty());
    }
}
