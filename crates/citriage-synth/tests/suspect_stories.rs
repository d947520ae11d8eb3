//! The planted regression stories, read back with independent parsers: the written
//! repositories are real git histories whose commits are the ones the planted jobs'
//! builds say they tested; each culprit lies between its job's last pass and first
//! failure (an ancestor of the first failing build's commit, not of the last passing
//! one's); the exposing commit changes the job's block of the job configuration; the
//! image-bump story's jobs run the new image from just before their onset; the same seed writes the same commit ids; and without the option nothing is written.

use citriage_git::{Git, LogQuery};
use citriage_synth::{generate, SynthParams};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn params(stories: bool) -> SynthParams {
    let mut p = SynthParams::preset("tiny").unwrap();
    p.jobs = 2;
    p.payloads = 0;
    p.days = 14;
    p.log_lines = 20;
    p.tests_per_build = 4;
    p.suspect_stories = stories;
    p
}

fn world(stories: bool) -> Option<(tempfile::TempDir, PathBuf)> {
    if citriage_git::GitProgram::locate().is_err() {
        eprintln!("skipped: git is not installed");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("world");
    generate(&params(stories), &root, &mut |_| {}).unwrap();
    Some((dir, root))
}

/// (start, tested commit, result) of a job's builds, oldest first.
fn builds(root: &Path, job: &str) -> Vec<(i64, String, String)> {
    let dir = root.join("gcs/kubernetes-ci-logs/logs").join(job);
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let b = e.unwrap().path();
        if !b.join("finished.json").is_file() {
            continue;
        }
        let started = json(&b.join("started.json"));
        let result = json(&b.join("finished.json"))["result"].as_str().unwrap_or_default().to_string();
        let tested = started["repo-commit"].as_str().unwrap_or_default().to_string();
        out.push((started["timestamp"].as_i64().unwrap(), tested, result));
    }
    out.sort();
    out
}

/// (start, image) of a job's builds, from their `prowjob.json`.
fn images(root: &Path, job: &str) -> Vec<(i64, String)> {
    let dir = root.join("gcs/kubernetes-ci-logs/logs").join(job);
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let b = e.unwrap().path();
        if !b.join("prowjob.json").is_file() {
            continue;
        }
        let started = json(&b.join("started.json"))["timestamp"].as_i64().unwrap();
        let pj = json(&b.join("prowjob.json"));
        out.push((started, pj["spec"]["pod_spec"]["containers"][0]["image"].as_str().unwrap().to_string()));
    }
    out.sort();
    out
}

#[test]
fn the_written_history_is_what_the_builds_tested() {
    let Some((_dir, root)) = world(true) else { return };
    let truth = json(&root.join("truth/suspects.json"));
    let repos = truth["repositories"].as_array().unwrap();
    assert_eq!(repos.len(), 2);
    let tested = Git::open(root.join(repos[0]["path"].as_str().unwrap())).unwrap();
    let config = Git::open(root.join(repos[1]["path"].as_str().unwrap())).unwrap();
    let known: std::collections::BTreeSet<String> =
        tested.log(&LogQuery::of("main")).unwrap().into_iter().map(|c| c.sha).collect();
    assert_eq!(known.len() as u64, repos[0]["commits"].as_u64().unwrap());
    let stories = truth["stories"].as_array().unwrap();
    assert_eq!(stories.len(), 9);
    let mut culprits = 0;
    for s in stories {
        let kind = s["kind"].as_str().unwrap();
        for job in s["jobs"].as_array().unwrap() {
            let job = job.as_str().unwrap();
            let bs = builds(&root, job);
            assert!(bs.len() > 40, "{job}: {} builds", bs.len());
            for (_, sha, _) in &bs {
                assert!(known.contains(sha), "{job} tested {sha}, which the history lacks");
            }
            let onset = citriage_model::time::parse_rfc3339(s["onset"].as_str().unwrap()).unwrap();
            // Every build from the onset fails; the last build before it passed unless flaky.
            assert!(bs.iter().filter(|b| b.0 >= onset).all(|b| b.2 != "SUCCESS"), "{job} passed after its onset");
            let last_pass = bs.iter().rfind(|b| b.0 < onset && b.2 == "SUCCESS").unwrap();
            let first_fail = bs.iter().find(|b| b.0 >= onset && b.2 == "FAILURE").unwrap();
            if let Some(c) = s["culprit"].as_str() {
                assert!(tested.is_ancestor(c, &first_fail.1).unwrap(), "{job}: culprit after the first failure");
                assert!(!tested.is_ancestor(c, &last_pass.1).unwrap(), "{job}: culprit before the last pass");
                culprits += 1;
            }
            if kind == "flaky" {
                assert!(bs.iter().any(|b| b.0 < onset && b.2 == "FAILURE"), "{job}: never failed before its onset");
            }
        }
        if let Some(image) = s.get("exposing_image") {
            // The image moves between every job's last pass and first failure, and no
            // job-configuration commit is planted for it.
            assert!(s["exposing"].is_null());
            let (from, to) = (image["from"].as_str().unwrap(), image["to"].as_str().unwrap());
            assert_ne!(from, to);
            let onset = citriage_model::time::parse_rfc3339(s["onset"].as_str().unwrap()).unwrap();
            for job in s["jobs"].as_array().unwrap() {
                for (start, img) in images(&root, job.as_str().unwrap()) {
                    assert_eq!(img, if start < onset - 300 { from } else { to }, "{job} at {start}");
                }
            }
        } else if kind == "exposing" {
            let sha = s["exposing"].as_str().unwrap();
            let c = config.log(&LogQuery::range(&format!("{sha}~1"), sha).with_patches()).unwrap();
            let job = s["jobs"][0].as_str().unwrap();
            assert_eq!(c.len(), 1);
            assert!(c[0].subject.contains(job), "{}", c[0].subject);
            assert!(c[0].patch.contains("+      - --node-lease-duration-seconds=5"), "{}", c[0].patch);
        } else {
            assert!(s["exposing"].is_null());
        }
    }
    assert_eq!(culprits, 5, "four culprit stories, one of them in two jobs");
    // The failing test's SIG owns the culprit's folder; the decoy's folder is another SIG's.
    let owned = stories.iter().find(|s| s["id"] == "culprit-owned-by-sig").unwrap();
    assert!(owned["test"].as_str().unwrap().starts_with("[sig-storage] "));
    let head = repos[0]["head"].as_str().unwrap();
    let labels =
        |dir: &str| String::from_utf8(tested.read_file(head, &format!("{dir}/OWNERS")).unwrap().unwrap()).unwrap();
    assert!(labels("pkg/volume").contains("labels:\n- sig/storage\n"), "{}", labels("pkg/volume"));
    assert!(labels("pkg/metrics").contains("- sig/instrumentation\n"));
    let roles: Vec<&str> = owned["planted"].as_array().unwrap().iter().map(|p| p[0].as_str().unwrap()).collect();
    assert_eq!(roles, ["decoy-other-sig"]);
    let decoy = owned["planted"][0][1].as_str().unwrap();
    let c = tested.log(&LogQuery::range(&format!("{decoy}~1"), decoy).with_files()).unwrap();
    assert_eq!(c[0].files, ["pkg/metrics/metrics.go"]);
    // Decoys sit in vendored, generated and documentation files.
    let roles: Vec<&str> = stories[0]["planted"].as_array().unwrap().iter().map(|p| p[0].as_str().unwrap()).collect();
    assert_eq!(roles, ["near-miss", "decoy-vendored", "decoy-generated", "decoy-docs"]);

    // Same seed, same commit ids.
    let Some((_dir2, root2)) = world(true) else { return };
    assert_eq!(
        std::fs::read(root.join("truth/suspects.json")).unwrap(),
        std::fs::read(root2.join("truth/suspects.json")).unwrap()
    );
}

#[test]
fn without_the_option_no_history_is_written() {
    let Some((_dir, root)) = world(false) else { return };
    assert!(!root.join("git").exists());
    assert!(!root.join("truth/suspects.json").exists());
    assert!(json(&root.join("truth.json"))["params"].get("suspect_stories").is_none());
}
