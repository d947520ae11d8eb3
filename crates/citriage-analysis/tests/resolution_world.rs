//! The resolution state machine over a synthetic world grown day by day: every
//! evening the pattern's record is evaluated with the builds and GitHub answers known
//! by then (the issue and the pull request linked on the day they opened, the pull
//! request's state as of that evening), its transitions kept as a store would keep
//! them, and the day each state is reached is compared with the world's truth: the
//! fix that works is confirmed exactly when the statistics allow, the fix that does
//! not and the fix of one branch fail after fix, nothing else does. The timeline is
//! printed (`cargo test -p citriage-analysis --test resolution_world -- --nocapture`).

use citriage_analysis::resolution::{evaluate, ByTime, Facts, LinkFact, Outcome, RefKind, RefStatus, Run, State};
use citriage_model::time::{parse_rfc3339, utc, DAY};
use citriage_model::{Day, Evidence, EvidenceKind};
use serde_json::Value;
use std::path::Path;

fn json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}

fn time(v: &Value) -> i64 {
    parse_rfc3339(v.as_str().unwrap()).unwrap()
}

/// The runs of a job read from its build folders: the pattern's signature in a failed
/// build's files is a failure of the pattern; aborted and unfinished builds do not count.
fn runs(root: &Path, job: &str, branch: &str, signature: &str) -> Vec<Run> {
    let dir = root.join("gcs/kubernetes-ci-logs/logs").join(job);
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let b = e.unwrap().path();
        if !b.join("finished.json").is_file() {
            continue;
        }
        let started = json(&b.join("started.json"));
        let result = json(&b.join("finished.json"))["result"].as_str().unwrap_or_default().to_string();
        let log = std::fs::read_to_string(b.join("build-log.txt")).unwrap_or_default();
        let outcome = match result.as_str() {
            "SUCCESS" => Outcome::Clean,
            "FAILURE" if log.contains(signature) => Outcome::Pattern,
            "FAILURE" => Outcome::Clean,
            _ => Outcome::Other,
        };
        let id = b.file_name().unwrap().to_string_lossy().to_string();
        out.push(Run {
            job: job.into(),
            build: format!("{job}/{id}"),
            started: started["timestamp"].as_i64().unwrap(),
            outcome,
            tested: started["repo-commit"].as_str().map(str::to_string),
            branch: Some(branch.into()),
            evidence: Evidence::new(EvidenceKind::BuildResult, format!("{job}/{id}"), result, "", "2026-11-21"),
        });
    }
    out
}

/// A link as known on the evening `now`: linked the evening of the day it opened, a
/// pull request merged once `merged_at` is past.
fn link(reference: &str, opened: i64, merged: Option<(i64, &str)>, now: i64) -> Option<LinkFact> {
    let linked_at = (opened.div_euclid(DAY) + 1) * DAY - 1;
    if linked_at > now {
        return None;
    }
    let (kind, status) = match merged {
        None => (RefKind::Issue, RefStatus::Open),
        Some((at, commit)) if at <= now => {
            (RefKind::Pr, RefStatus::Merged { at, commit: Some(commit.into()), base: Some("master".into()) })
        }
        Some(_) => (RefKind::Pr, RefStatus::Open),
    };
    let evidence = vec![Evidence::new(EvidenceKind::IssueState, reference, format!("{status:?}"), "", "2026-11-21")];
    Some(LinkFact { reference: reference.into(), kind, status, linked_at, unlinked_at: None, evidence })
}

#[test]
fn records_of_a_world_grown_day_by_day_reach_the_states_its_truth_expects_on_the_days_it_expects() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("world");
    let mut p = citriage_synth::SynthParams::preset("tiny").unwrap();
    p.jobs = 4;
    p.payloads = 0;
    p.fix_stories = true;
    citriage_synth::generate(&p, &root, &mut |_| {}).unwrap();
    let truth = json(&root.join("truth.json"));
    let (first, last) = (
        Day::parse(truth["world"]["start_date"].as_str().unwrap()).unwrap().0,
        Day::parse(truth["world"]["end_date"].as_str().unwrap()).unwrap().0,
    );
    for story in truth["fixes"].as_array().unwrap() {
        let kind = story["story"].as_str().unwrap();
        let signature = story["signature"].as_str().unwrap();
        let all: Vec<Run> = story["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|j| runs(&root, j["name"].as_str().unwrap(), j["branch"].as_str().unwrap(), signature))
            .collect();
        let merged_at = time(&story["merged_at"]);
        let commit = story["merge_commit"].as_str().unwrap();
        let issue = (story["issue"]["reference"].as_str().unwrap(), time(&story["issue"]["opened"]));
        let pr = (story["pull_request"]["reference"].as_str().unwrap(), time(&story["pull_request"]["opened"]));
        let (mut state, mut since) = (State::New, first * DAY);
        let mut history: Vec<(State, State, i64)> = Vec::new();
        let mut reached: Vec<(String, String, i64)> = Vec::new();
        println!("\n{kind}: {} ({})", story["pattern"].as_str().unwrap(), story["test"].as_str().unwrap());
        for d in first..=last {
            let now = (d + 1) * DAY - 1;
            let known: Vec<Run> = all.iter().filter(|r| r.started <= now).cloned().collect();
            let links: Vec<LinkFact> =
                [link(issue.0, issue.1, None, now), link(pr.0, pr.1, Some((merged_at, commit)), now)]
                    .into_iter()
                    .flatten()
                    .collect();
            let e = evaluate(&Facts { state, since, history: &history, links: &links, runs: &known, now }, &ByTime);
            for s in &e.steps {
                println!("  {}  {:<16} → {:<16} {}", utc(s.at), s.from.label(), s.to.label(), s.reason);
                history.push((s.from, s.to, s.at));
                reached.push((s.to.as_str().to_string(), Day(d).to_string(), s.at));
                if kind == "one-branch" && s.to == State::FailedAfterFix {
                    assert!(s.reason.contains("a cherry-pick to release-1.35 is needed"), "{}", s.reason);
                }
            }
            if let Some(c) =
                e.confirmation.as_ref().filter(|c| !c.confirmed && e.steps.iter().all(|s| s.to != State::FixConfirmed))
            {
                println!("  {}  awaiting confirmation: chance so far {:.1}%; {}", Day(d), c.chance * 100.0, c.plan);
            }
            state = e.state;
            since = e.since;
        }
        let want: Vec<(String, String, Option<i64>)> = story["expected"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["state"].as_str().unwrap().to_string(),
                    e["day"].as_str().unwrap().to_string(),
                    e.get("at").map(time),
                )
            })
            .collect();
        let got: Vec<(String, String, Option<i64>)> = reached
            .iter()
            .enumerate()
            .map(|(i, (s, d, at))| (s.clone(), d.clone(), want.get(i).and_then(|w| w.2).map(|_| *at)))
            .collect();
        assert_eq!(got, want, "{kind}");
        let failed_after_fix = reached.iter().any(|r| r.0 == "failed-after-fix");
        assert_eq!(
            failed_after_fix,
            kind != "works",
            "{kind}: failed after fix fires exactly for the incomplete fixes"
        );
    }
}
