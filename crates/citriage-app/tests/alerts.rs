//! Alert turns over a real store: a periodic job's failing runs raise one alert, checked
//! by the verifier against the stored builds and planned for its owner's destination;
//! the next turn over the same data says nothing; a pass withdraws it; triage records'
//! transitions (failed after fix, fix confirmed) alert from the records' history.

use citriage_alerts::route::Routes;
use citriage_app::alerts::{self, AlertOptions};
use citriage_app::Silent;
use citriage_model::build::BuildRecord;
use citriage_model::{Evidence, EvidenceKind};
use citriage_store::{NewTransition, Store, Subject};

const T0: i64 = 1_795_000_000;

fn build(job: &str, n: i64, result: &str) -> BuildRecord {
    BuildRecord {
        bucket: "kubernetes-ci-logs".into(),
        path: format!("logs/{job}/{}", 1_795_000_000_000_000_000i64 + n),
        job: job.into(),
        build_id: format!("{}", 1_795_000_000_000_000_000i64 + n),
        kind: "periodic".into(),
        pr: None,
        commit_sha: None,
        repo_commit: None,
        repo_version: None,
        repos: None,
        started: Some(T0 + n * 3600),
        finished: Some(T0 + n * 3600 + 600),
        duration: Some(600),
        result: Some(result.into()),
        state: None,
        executor: None,
        origin: "gcs".into(),
        problems: vec![],
        complete: true,
        tests: vec![],
        artifacts: vec![],
        excerpts: vec![],
        kettle: None,
        testgrid: None,
        versions: Vec::new(),
    }
}

fn setup() -> AlertOptions {
    let dests = ["node-hook".to_string()];
    AlertOptions {
        routes: Routes::new([("sig-node", &dests[..])], Vec::<String>::new()),
        owners: vec![("sig-node".into(), regex::Regex::new("^ci-node-").unwrap())],
        ..AlertOptions::default()
    }
}

#[test]
fn a_red_job_alerts_once_is_checked_routed_and_withdrawn_by_a_pass() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("s.db")).unwrap();
    for (n, r) in ["SUCCESS", "FAILURE", "FAILURE", "FAILURE"].iter().enumerate() {
        store.put_build(&build("ci-node-e2e", n as i64, r)).unwrap();
    }
    let s = setup();
    let dry = alerts::turn(&mut store, &AlertOptions { as_of: None, dry_run: true, ..s.clone() }, &Silent).unwrap();
    assert_eq!(dry.alerts.len(), 1);
    assert!(dry.written.is_none() && store.alerts(None, None).unwrap().is_empty(), "a dry run writes nothing");
    let r = alerts::turn(&mut store, &s, &Silent).unwrap();
    assert_eq!(r.alerts.len(), 1);
    let a = &r.alerts[0];
    assert_eq!((a.alert.kind.as_str(), a.alert.owner.as_str()), ("job-red", "node"));
    assert!(a.held.is_none(), "the stored builds bear the alert out: {:?}", a.held);
    assert_eq!(a.destinations, vec!["node-hook"]);
    let outbox = store.outbox().unwrap();
    assert_eq!((outbox.len(), outbox[0].message.as_str()), (1, a.alert.key.as_str()));
    // Its evidence resolves in the ledger.
    for e in &a.alert.evidence {
        assert!(store.evidence(&e.id).unwrap().is_some(), "{}", e.id);
    }
    // Same data: nothing new.
    let again = alerts::turn(&mut store, &s, &Silent).unwrap();
    assert!(again.alerts.is_empty());
    store.put_build(&build("ci-node-e2e", 4, "SUCCESS")).unwrap();
    let green = alerts::turn(&mut store, &s, &Silent).unwrap();
    assert_eq!(green.alerts.len(), 1);
    assert_eq!(green.alerts[0].alert.withdraws.as_deref(), Some(a.alert.key.as_str()));
    assert_eq!(store.outbox().unwrap().len(), 2, "the withdrawal goes where the alert went");
}

#[test]
fn records_transitions_alert_from_the_records_history() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("s.db")).unwrap();
    for n in 0..3 {
        store.put_build(&build("ci-node-e2e", n, "SUCCESS")).unwrap();
    }
    let subject = Subject::Job { job: "ci-node-e2e".into() };
    let rec = store.ensure_record(&subject, "ci-node-e2e fails", T0).unwrap();
    let ev =
        Evidence::new(EvidenceKind::BuildResult, "gs://b/logs/ci-node-e2e/1/finished.json", "result=FAILURE", "", "d");
    let step = |from: &str, to: &str, at: i64| NewTransition {
        from: from.into(),
        to: to.into(),
        at,
        evidence: vec![ev.clone()],
        reason: format!("{to} on the evidence"),
    };
    let ts = [
        step("new", "triaged", T0),
        step("triaged", "fix-merged", T0 + 3600),
        step("fix-merged", "failed-after-fix", T0 + 7200),
    ];
    store.apply_record_transitions(&subject.key(), rec.version, &ts, T0 + 7200).unwrap();
    let s = setup();
    let r = alerts::turn(&mut store, &AlertOptions { as_of: Some(T0 + 3 * 3600), ..s.clone() }, &Silent).unwrap();
    let kinds: Vec<&str> = r.alerts.iter().map(|a| a.alert.kind.as_str()).collect();
    assert_eq!(kinds, ["failed-after-fix"], "{:?}", r.alerts);
    assert_eq!(r.alerts[0].alert.owner, "node");
    assert_eq!(r.alerts[0].alert.evidence, vec![ev.clone()]);
    let rec = store.record(&subject.key()).unwrap().unwrap();
    store
        .apply_record_transitions(
            &subject.key(),
            rec.version,
            &[step("failed-after-fix", "fix-confirmed", T0 + 4 * 3600)],
            T0 + 4 * 3600,
        )
        .unwrap();
    let r = alerts::turn(&mut store, &AlertOptions { as_of: Some(T0 + 5 * 3600), ..s.clone() }, &Silent).unwrap();
    assert_eq!(r.alerts.len(), 1);
    assert_eq!(r.alerts[0].alert.kind.as_str(), "fix-confirmed");
    assert!(r.alerts[0].alert.withdraws.is_some(), "the confirmation closes the failed-after-fix alert");
}
