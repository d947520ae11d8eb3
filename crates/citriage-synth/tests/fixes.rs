//! The planted fix stories, read back from the generated files with independent
//! parsers: each story's jobs fail with its pattern before the fix and (for the fix
//! that works, and on the fixed branch) never after it; the builds started after the
//! merge test commits no build tested before it; the GitHub answers carry the merge
//! time and commit the truth names; and the days the truth expects each record state
//! follow from the builds by the documented rule, recomputed here.

use citriage_synth::{generate, SynthParams};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn time(s: &str) -> i64 {
    citriage_model::time::parse_rfc3339(s).unwrap_or_else(|| panic!("{s:?} is not RFC 3339"))
}

/// A build of a story job: start, tested commit, and `Some(true)` when it failed with
/// the pattern (its signature in any of its files), `Some(false)` when it ran clean of
/// it, `None` when aborted or unfinished.
struct Build {
    started: i64,
    /// `repo-commit`: the commit the periodic checked out.
    tested: String,
    /// The branch it checked out.
    branch: String,
    hit: Option<bool>,
}

fn builds(root: &Path, job: &str, signature: &str) -> Vec<Build> {
    let dir = root.join("gcs/kubernetes-ci-logs/logs").join(job);
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let b = e.unwrap().path();
        if !b.join("started.json").is_file() {
            continue;
        }
        let started = json(&b.join("started.json"));
        let result = b.join("finished.json").is_file().then(|| json(&b.join("finished.json"))["result"].clone());
        let tested = started["repo-commit"].as_str().unwrap_or_default().to_string();
        let branch = started["repos"]["kubernetes/kubernetes"].as_str().unwrap_or_default().to_string();
        let mut text = String::new();
        let mut stack = vec![b.clone()];
        while let Some(d) = stack.pop() {
            for f in std::fs::read_dir(&d).unwrap() {
                let f = f.unwrap().path();
                if f.is_dir() {
                    stack.push(f);
                } else {
                    text.push_str(&String::from_utf8_lossy(&std::fs::read(&f).unwrap()));
                }
            }
        }
        let hit = match result.as_ref().and_then(Value::as_str) {
            Some("SUCCESS") => Some(false),
            Some("FAILURE") => Some(text.contains(signature)),
            _ => None,
        };
        out.push(Build { started: started["timestamp"].as_i64().unwrap(), tested, branch, hit });
    }
    out.sort_by_key(|b| b.started);
    out
}

fn world(fix_stories: bool) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("world");
    let mut p = SynthParams::preset("tiny").unwrap();
    p.jobs = 6;
    p.payloads = 0;
    p.fix_stories = fix_stories;
    generate(&p, &root, &mut |_| {}).unwrap();
    (dir, root)
}

fn day(t: i64) -> String {
    citriage_model::Day(t.div_euclid(86_400)).to_string()
}

#[test]
fn the_planted_fixes_hold_in_the_builds_and_the_truth_says_when_each_state_is_due() {
    let (_dir, root) = world(true);
    let truth = json(&root.join("truth.json"));
    let stories = truth["fixes"].as_array().expect("fixes in the truth");
    let kinds: Vec<&str> = stories.iter().map(|s| s["story"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["works", "does-not-work", "one-branch"]);
    for s in stories {
        let kind = s["story"].as_str().unwrap();
        let merged = time(s["merged_at"].as_str().unwrap());
        let signature = s["signature"].as_str().unwrap();
        // The pull request as GitHub answers it.
        let (_, n) = s["pull_request"]["reference"].as_str().unwrap().split_once('#').unwrap();
        let pull = json(&root.join(format!("github/api/repos/kubernetes/kubernetes/pulls/{n}")));
        assert_eq!(pull["merged_at"], s["merged_at"], "{kind}");
        assert_eq!(pull["merge_commit_sha"], s["merge_commit"], "{kind}");
        assert_eq!(pull["base"]["ref"], "master", "{kind}");
        assert!(time(pull["created_at"].as_str().unwrap()) < merged, "{kind}");
        let (_, i) = s["issue"]["reference"].as_str().unwrap().split_once('#').unwrap();
        let issue = json(&root.join(format!("github/api/repos/kubernetes/kubernetes/issues/{i}")));
        assert!(issue["title"].as_str().unwrap().contains(s["test"].as_str().unwrap()), "{kind}");
        assert!(issue.get("pull_request").is_none(), "{kind}: an issue");
        assert!(pull["body"].as_str().unwrap().contains(&format!("Fixes #{i}")), "{kind}");

        let mut all: Vec<(i64, String, Option<bool>)> = Vec::new();
        let mut rates: BTreeMap<String, f64> = BTreeMap::new();
        for j in s["jobs"].as_array().unwrap() {
            let name = j["name"].as_str().unwrap();
            let bs = builds(&root, name, signature);
            let before: Vec<&Build> = bs.iter().filter(|b| b.started < merged).collect();
            let after: Vec<&Build> = bs.iter().filter(|b| b.started >= merged).collect();
            assert!(before.iter().any(|b| b.hit == Some(true)), "{kind}/{name}: the pattern before the fix");
            let failed_after = after.iter().filter(|b| b.hit == Some(true)).count();
            let fixed = j["fixed"].as_bool().unwrap();
            if fixed {
                assert_eq!(failed_after, 0, "{kind}/{name}: the fix removed the pattern");
            } else {
                assert!(failed_after > 0, "{kind}/{name}: the pattern goes on");
            }
            // Builds of master after the merge never test a commit tested before it:
            // they check out the branch's head, which has the merge commit from then on
            // (a release branch may test the same commit for days).
            let old: BTreeSet<&str> = before.iter().map(|b| b.tested.as_str()).collect();
            if j["branch"] == "master" {
                assert!(after.iter().all(|b| !old.contains(b.tested.as_str())), "{kind}/{name}");
            }
            assert!(bs.iter().all(|b| j["branch"] == b.branch.as_str() && b.tested.len() == 40), "{kind}/{name}");
            let window: Vec<bool> =
                before.iter().filter(|b| b.started >= merged - 14 * 86_400).filter_map(|b| b.hit).collect();
            let fails = window.iter().filter(|h| **h).count() as f64;
            rates.insert(name.to_string(), fails / (window.len() as f64 + 1.0));
            all.extend(after.iter().map(|b| (b.started, name.to_string(), b.hit)));
        }
        all.sort();
        // The last state the truth expects, recomputed.
        let want = match kind {
            "works" => {
                let mut log = 0.0f64;
                let mut at = None;
                for (t, job, hit) in &all {
                    if *hit == Some(false) {
                        log += (1.0 - rates[job]).ln();
                        if log < 0.05f64.ln() {
                            at = Some(*t);
                            break;
                        }
                    }
                }
                ("fix-confirmed", at.expect("enough clean runs by the end of the world"))
            }
            _ => ("failed-after-fix", all.iter().find(|b| b.2 == Some(true)).unwrap().0),
        };
        let expected = s["expected"].as_array().unwrap();
        let states: Vec<&str> = expected.iter().map(|e| e["state"].as_str().unwrap()).collect();
        assert_eq!(states, ["triaged", "fix-merged", want.0], "{kind}");
        assert_eq!(expected[1]["day"], day(merged), "{kind}");
        assert_eq!(expected[2]["at"].as_str().map(time), Some(want.1), "{kind}");
        assert_eq!(expected[2]["day"], day(want.1), "{kind}");
        assert_eq!(expected[0]["day"], day(time(s["issue"]["opened"].as_str().unwrap())), "{kind}");
        if kind == "one-branch" {
            let release = s["jobs"][1]["name"].as_str().unwrap();
            assert!(release.ends_with("-1-35"), "{release}");
        }
    }
}

#[test]
fn without_the_stories_the_world_is_as_before() {
    let (_dir, root) = world(false);
    let truth = json(&root.join("truth.json"));
    assert!(truth.get("fixes").is_none());
    assert!(truth["params"].get("fix_stories").is_none(), "the parameters print as before");
    let p: SynthParams = serde_json::from_value(truth["params"].clone()).unwrap();
    assert!(!p.fix_stories);
    assert!(!root.join("gcs/kubernetes-ci-logs/logs/ci-kubernetes-e2e-kind-apps").exists());
}
