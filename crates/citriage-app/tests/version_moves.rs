//! What a job ran with, compared between its window's ends by `suspects`: an image that
//! held still and then moved between the last pass and the first failure is named as
//! the exposing change (with both builds' URLs, the file and the key); an entry that
//! changes with every build, and a version built from the tested commit, are not; a job
//! without stored versions gets none; a move is never a revert candidate.

use citriage_app::suspects::{suspects, SuspectsOptions};
use citriage_app::Silent;
use citriage_model::build::{BuildRecord, BuildVersion};
use citriage_store::Store;

const T0: i64 = 1_778_300_000;
const OLD: &str = "gcr.io/k8s-staging-test-infra/kubekins-e2e:v20261101-5c1e2d3f4a-master";
const NEW: &str = "gcr.io/k8s-staging-test-infra/kubekins-e2e:v20261127-0d9e8f7a6b-master";

fn v(file: &str, key: &str, value: &str) -> BuildVersion {
    BuildVersion { file: file.into(), key: key.into(), value: value.into() }
}

/// Build `n` of `job`, started `n` hours after T0, testing commit `sha`.
fn build(job: &str, n: u32, result: &str, sha: &str, versions: Vec<BuildVersion>) -> BuildRecord {
    BuildRecord {
        bucket: "kubernetes-ci-logs".into(),
        path: format!("logs/{job}/{}", 7000 + n),
        job: job.into(),
        build_id: format!("{}", 7000 + n),
        kind: "periodic".into(),
        pr: None,
        commit_sha: Some(sha.into()),
        repo_commit: Some(sha.into()),
        repo_version: None,
        repos: Some(format!(r#"{{"example/widgets": "main:{sha}"}}"#)),
        started: Some(T0 + i64::from(n) * 3600),
        finished: Some(T0 + i64::from(n) * 3600 + 600),
        duration: Some(600),
        result: Some(result.into()),
        state: None,
        executor: None,
        origin: "gcs".into(),
        problems: Vec::new(),
        complete: true,
        tests: Vec::new(),
        artifacts: Vec::new(),
        excerpts: Vec::new(),
        kettle: None,
        testgrid: None,
        versions,
    }
}

fn sha(n: u32) -> String {
    format!("{:040x}", 0xabcdef0000_u64 + u64::from(n))
}

/// Six builds: five pass, the sixth fails. `image(n)` is build n's image; every build
/// also carries a pod name (new each build) and a job version built from its commit.
fn job(st: &mut Store, job: &str, image: impl Fn(u32) -> String) {
    for n in 1..=6 {
        let sha = sha(n);
        let versions = vec![
            v("finished.json", "metadata.job-version", &format!("v1.36.0-alpha.0.{n}+{}", &sha[..14])),
            v("finished.json", "metadata.tool-version", &format!("v0.{n}.0")),
            v("finished.json", "metadata.kubetest-version", "v20261101-1"),
            v("prowjob.json", "spec.pod_spec.containers[test].image", &image(n)),
        ];
        let result = if n == 6 { "FAILURE" } else { "SUCCESS" };
        st.put_build(&build(job, n, result, &sha, versions)).unwrap();
    }
}

fn answer(st: &mut Store, target: &str) -> citriage_app::suspects::Suspects {
    let opts = SuspectsOptions { target: target.into(), ..Default::default() };
    suspects(st, &opts, &Silent).unwrap()
}

#[test]
fn an_image_that_held_still_and_moved_is_the_exposing_change() {
    let mut st = Store::open_in_memory().unwrap();
    job(&mut st, "ci-bumped", |n| if n < 6 { OLD } else { NEW }.to_string());
    let a = answer(&mut st, "ci-bumped");
    assert_eq!(a.versions_moved.len(), 1, "{:?}", a.versions_moved);
    let m = &a.versions_moved[0];
    assert_eq!((m.kind, m.from.as_str(), m.to.as_str()), ("image", OLD, NEW));
    assert_eq!((m.file.as_str(), m.key.as_str()), ("prowjob.json", "spec.pod_spec.containers[test].image"));
    assert!(m.every_job);
    let w = &m.windows[0];
    assert_eq!((w.good_build.as_str(), w.bad_build.as_str(), w.held_before), ("7005", "7006", 3));
    assert_eq!(w.bad_url, "https://prow.k8s.io/view/gs/kubernetes-ci-logs/logs/ci-bumped/7006");
    assert!(a.verdict.contains(&format!("exposed by image {OLD} → {NEW}")), "{}", a.verdict);
    assert!(a.verdict.contains("introducing change unknown"), "{}", a.verdict);
    let blame = a.blame();
    assert_eq!(blame.kind, "exposed");
    assert!(
        blame.evidence.iter().any(|e| e.contains("logs/ci-bumped/7005") && e.contains(NEW)),
        "{:?}",
        blame.evidence
    );
    // Never a revert: no commit is a candidate, and a move is none.
    assert!(a.top().is_empty());
}

#[test]
fn entries_that_change_every_build_or_name_the_tested_commit_are_not_named() {
    let mut st = Store::open_in_memory().unwrap();
    // The image churns with every build: moving at the onset says nothing.
    job(&mut st, "ci-churning", |n| format!("gcr.io/k8s-staging-test-infra/kubekins-e2e:v2026110{n}-master"));
    let a = answer(&mut st, "ci-churning");
    assert!(a.versions_moved.is_empty(), "{:?}", a.versions_moved);
    assert!(!a.verdict.contains("exposed by"), "{}", a.verdict);
    assert_eq!(a.blame().kind, "unknown");
}

#[test]
fn builds_without_versions_give_no_move() {
    let mut st = Store::open_in_memory().unwrap();
    for n in 1..=6 {
        let result = if n == 6 { "FAILURE" } else { "SUCCESS" };
        st.put_build(&build("ci-bare", n, result, &sha(n), Vec::new())).unwrap();
    }
    let a = answer(&mut st, "ci-bare");
    assert!(a.versions_moved.is_empty());
    assert!(a.verdict.contains("window only"), "{}", a.verdict);
}
