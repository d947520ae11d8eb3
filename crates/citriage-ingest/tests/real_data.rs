//! Data the CI systems wrote themselves (`shared/data/real/`): the real TestGrid
//! table of an OpenShift 4.4 tab stored as builds with every cell accounted for and
//! its flake signals listed with their evidence, and a real 2016 Kubernetes build
//! ingested from a mirror laid out around it and flagged as what it is: a SUCCESS
//! with failed tests. Each test skips with a reason when the shared data is absent.

use citriage_analysis::build_findings;
use citriage_analysis::metrics::corrected::{job_figures, Settings};
use citriage_analysis::misclass::FindingKind;
use citriage_ingest::testgrid::{ingest_table, TestgridOptions};
use citriage_ingest::{discover_jobs, ingest_jobs, IngestOptions};
use citriage_model::build::BuildRecord;
use citriage_model::{Dataset, Day, FlakeStats, JobEntry, JobStats, Snapshot, SnapshotMeta};
use citriage_sources::artifacts::LocalMirror;
use citriage_store::Store;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A file or folder of the shared data beside the checkout (`../shared/data`).
fn shared(rel: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data").join(rel);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("skipped: {} is not available", p.display());
        None
    }
}

const DASHBOARD: &str = "redhat-openshift-ocp-release-4.4-informing";
const TAB: &str = "release-openshift-ocp-installer-e2e-gcp-rt-4.4";

fn builds(st: &mut Store) -> Vec<BuildRecord> {
    let mut out = Vec::new();
    for j in st.build_jobs().unwrap() {
        out.extend(st.job_builds_with_tests(&j, None).unwrap());
    }
    out
}

#[test]
fn the_real_table_is_stored_with_every_cell_accounted_for_and_its_flake_signals_listed() {
    let Some(path) = shared("real/testgrid-2020/e2e-gcp-rt-4.4.table.json") else { return };
    let bytes = std::fs::read(&path).unwrap();
    let mut st = Store::open_in_memory().unwrap();
    let o =
        ingest_table(&mut st, DASHBOARD, TAB, &bytes, &TestgridOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((o.columns, o.rows), (82, 965));
    assert_eq!(o.cells.values().sum::<u64>(), 82 * 965, "cells = runs × rows");
    println!("{TAB}: {} runs × {} rows", o.columns, o.rows);
    for (status, n) in &o.cells {
        println!("  {status:<17} {n:>6}");
    }

    // Independently of the reader: the JSON walked plainly, each row's runs summed
    // by value, the Overall row apart.
    let plain: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let mut by_value: BTreeMap<(bool, u64), u64> = BTreeMap::new();
    for row in plain["tests"].as_array().unwrap() {
        let overall = row["name"] == "Overall";
        for r in row["statuses"].as_array().unwrap() {
            *by_value.entry((overall, r["value"].as_u64().unwrap())).or_default() += r["count"].as_u64().unwrap();
        }
    }
    let cell = |overall: bool, v: u64| by_value.get(&(overall, v)).copied().unwrap_or(0);
    // Every cell is a passed or failed result, no result, or the build's own result.
    assert_eq!(by_value.keys().map(|(_, v)| *v).filter(|v| ![0, 1, 12].contains(v)).count(), 0);
    let stored = builds(&mut st);
    assert_eq!(stored.len(), 82);
    let passed = stored.iter().flat_map(|b| &b.tests).filter(|t| t.status == "passed").count() as u64;
    let failed = stored.iter().flat_map(|b| &b.tests).filter(|t| t.status == "failed").count() as u64;
    assert_eq!((passed, failed), (cell(false, 1), cell(false, 12)));
    assert_eq!(o.results, passed + failed);
    assert_eq!(st.build_counts().unwrap().1, passed + failed, "every result stored");
    let results: BTreeMap<&str, usize> = stored.iter().fold(BTreeMap::new(), |mut m, b| {
        *m.entry(b.result.as_deref().unwrap_or("-")).or_default() += 1;
        m
    });
    assert_eq!(results.get("SUCCESS").copied().unwrap_or(0) as u64, cell(true, 1));
    assert_eq!(results.get("FAILURE").copied().unwrap_or(0) as u64, cell(true, 12));
    println!("builds by result: {results:?}; {passed} passed and {failed} failed results stored");
    // Where the builds are: the tab's query names the bucket and the job.
    assert!(stored.iter().all(|b| b.bucket == "origin-ci-test" && b.path.starts_with(&format!("logs/{TAB}/"))));
    // The tab's Commit column holds "1" in every run: no commit, said once.
    assert!(stored.iter().all(|b| b.commit_sha.is_none()));
    assert!(o.warnings.iter().any(|w| w.contains("the Commit column holds \"1\"")), "{:?}", o.warnings);
    let tab = &st.testgrid_tabs().unwrap()[0];
    assert_eq!((tab.dashboard.as_str(), tab.job.as_str()), (DASHBOARD, TAB));
    assert!(tab.meta.contains("bugzilla.redhat.com") && tab.status_counts.contains("\"FAIL\":797"));

    // Flake signals over the whole table, each with the runs and builds it rests on.
    let newest = stored.iter().filter_map(|b| b.started).max().unwrap();
    let mut settings = Settings::new(Day::from_unix_seconds(newest).end_seconds(), Vec::new());
    settings.window_days = 14;
    let figures = job_figures(&stored, &settings);
    assert_eq!(figures.len(), 1);
    let f = &figures[0];
    assert!(f.flags.iter().any(|x| x.kind == "testgrid-only"), "what TestGrid does not carry is said");
    println!(
        "{}: {} passes, {} failures over {} days; pass rate {:.3}",
        f.job,
        f.passes,
        f.failures,
        f.window_days,
        f.pass_rate.unwrap_or(0.0)
    );
    let flaky: Vec<_> = f.tests.iter().filter(|t| t.is_flaky()).collect();
    for t in &flaky {
        println!("  flaky: {} ({} of {} runs failed)", t.name, t.failed_runs, t.runs);
        for s in t.signals.iter().filter(|s| s.fired) {
            println!("    {}: {} [{} run(s): {}]", s.kind, s.detail, s.runs, s.builds.join(", "));
            assert!(!s.builds.is_empty() && s.runs > 0, "{}: a signal rests on builds", t.name);
            for b in &s.builds {
                assert!(stored.iter().any(|x| &x.path == b), "{b} is a stored build");
            }
        }
    }
    assert_eq!(
        f.tests.iter().map(|t| t.failed_runs + t.environment_failures).sum::<u64>(),
        cell(false, 12),
        "every failed cell is a failed run"
    );
    println!("{} of {} failing tests flagged flaky", flaky.len(), f.tests.len());
}

/// A mirror of one bucket with the real 2016 build as `logs/<job>/5043`.
fn mirror_around(build: &Path, root: &Path, job: &str) -> PathBuf {
    let bucket = root.join("kubernetes-jenkins");
    let dest = bucket.join("logs").join(job).join("5043");
    std::fs::create_dir_all(dest.join("artifacts")).unwrap();
    for f in ["started.json", "finished.json", "build-log.txt"] {
        std::fs::copy(build.join(f), dest.join(f)).unwrap();
    }
    for e in std::fs::read_dir(build.join("artifacts")).unwrap().flatten() {
        std::fs::copy(e.path(), dest.join("artifacts").join(e.file_name())).unwrap();
    }
    std::fs::write(bucket.join("logs").join(job).join("latest-build.txt"), "5043").unwrap();
    bucket
}

#[test]
fn the_real_2016_build_is_flagged_as_a_success_with_failed_tests() {
    let Some(build) = shared("real/gubernator-2016/5043") else { return };
    let dir = tempfile::tempdir().unwrap();
    let job = "kubernetes-e2e-gce-serial";
    let bucket = mirror_around(&build, dir.path(), job);
    let src = LocalMirror::new(bucket, "kubernetes-jenkins");
    let jobs = discover_jobs(&src).unwrap();
    assert_eq!(jobs, [job]);
    let mut st = Store::open_in_memory().unwrap();
    let s = ingest_jobs(&src, &mut st, &jobs, &IngestOptions::default(), &|_| {}).unwrap();
    assert_eq!((s.builds_stored, s.failures.len()), (1, 0), "{:?}", s.failures);
    let b = &builds(&mut st)[0];
    assert_eq!(b.result.as_deref(), Some("SUCCESS"));
    // What it ran with: the version its started.json names (bootstrap wrote no metadata).
    let ids: Vec<i64> = st.build_index().unwrap().iter().map(|b| b.id).collect();
    let versions = st.build_versions(&ids).unwrap();
    let kept: Vec<(&str, &str, &str)> =
        versions.values().flatten().map(|v| (v.file.as_str(), v.key.as_str(), v.value.as_str())).collect();
    assert_eq!(kept, [("started.json", "version", "v1.3.0-alpha.2.12+31de62216dea22")]);
    let failed: Vec<&str> = b.tests.iter().filter(|t| t.status == "failed").map(|t| t.name.as_str()).collect();
    assert_eq!(failed.len(), 7, "{failed:?}");
    assert_eq!(b.tests.len() + b.tests.iter().filter(|t| t.status == "skipped").count(), b.tests.len());

    let as_of = Day::from_unix_seconds(b.started.unwrap()).end_seconds();
    let f = &job_figures(std::slice::from_ref(b), &Settings::new(as_of, Vec::new()))[0];
    let flag = f.flags.iter().find(|x| x.kind == "passed-with-failed-tests").expect("flagged");
    assert!(
        flag.detail.contains("1 build(s) in the window say SUCCESS") && flag.detail.contains("7 failed test(s)"),
        "{}",
        flag.detail
    );
    assert_eq!(f.pass_rate, Some(1.0), "the pass rate counts it as a pass, which the flag says");

    // As a misclassification of a dashboard that lists the job, with the build as evidence.
    let snap = Snapshot::new(
        SnapshotMeta {
            dataset: Dataset::Flakes,
            date: Day::from_unix_seconds(b.started.unwrap()),
            source: "flakes.json".into(),
            sha256: String::new(),
        },
        vec![JobEntry {
            job: job.into(),
            stats: JobStats::Flakes(FlakeStats { consistency: 1.0, flakes: 0, test_flakes: None }),
        }],
    );
    let found = build_findings::find(&snap, std::slice::from_ref(b), Vec::new());
    let m = found.findings.iter().find(|x| x.kind == FindingKind::PassedWithFailedTests).expect("the finding");
    assert_eq!(m.jobs, [job]);
    assert!(
        m.evidence.iter().any(|e| e.locator.contains("logs/kubernetes-e2e-gce-serial/5043/finished.json")),
        "{:?}",
        m.evidence
    );
    println!("{}: {}", m.kind.title(), m.reality);
}
