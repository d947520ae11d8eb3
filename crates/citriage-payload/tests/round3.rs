//! The suspects' round-3 traps, planted by the synthetic world (`tiny`): two
//! innocent PRs of the culprit's component with the same evidence (a tie,
//! shown as one, below the culprit that its diff sets apart), a PR title
//! sharing one generic word with the failing test's name (worth nothing), and
//! an aggregated job whose whole network area failed at once (one root cause
//! with many symptoms, not one per test); and a snapshot found from whatever
//! folder of it is named.

use std::path::Path;

use citriage_payload::result::PayloadAnalysis;
use citriage_payload::scoring::Signal;
use citriage_payload::{analyze, AnalyzeOptions, GcsMirror, RecordedDir};
use serde_json::Value;

/// The world and the tag of the payload where its culprit came in.
fn culprit_payload(root: &Path) -> (String, Value) {
    let params = citriage_synth::SynthParams::preset("tiny").expect("tiny preset");
    citriage_synth::generate(&params, root, &mut |_| {}).expect("generate the world");
    let truth: Value = serde_json::from_slice(&std::fs::read(root.join("truth.json")).unwrap()).unwrap();
    let t = truth["payloads"]["tags"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["event"] == "culprit-introduced")
        .expect("a culprit-introduced payload")
        .clone();
    (t["tag"].as_str().unwrap().to_string(), t)
}

fn analysis(root: &Path, tag: &str) -> PayloadAnalysis {
    analyze(&RecordedDir::open(root), &GcsMirror::new(root.join("gcs")), &AnalyzeOptions::new(tag)).expect("analysis")
}

#[test]
fn ties_generic_titles_and_mass_failures() {
    let dir = tempfile::tempdir().unwrap();
    let (tag, truth) = culprit_payload(dir.path());
    let a = analysis(dir.path(), &tag);
    let culprit = format!("pr:{}#{}", truth["culprit"]["repo"].as_str().unwrap(), truth["culprit"]["pr"]);

    // The culprit ranks first alone wherever it is a suspect.
    let mine: Vec<_> = a.suspects.iter().filter(|s| s.candidate == culprit).collect();
    assert!(!mine.is_empty(), "the culprit is no suspect");
    for s in &mine {
        assert_eq!((s.rank, s.tied_with.len()), (1, 0), "{} in {}: {s:?}", s.candidate, s.root_cause);
    }

    // Its two innocent neighbours share a rank and are listed as one tie, with what would separate them.
    let neighbours: Vec<String> = a
        .candidates
        .iter()
        .filter(|c| c.repo.as_deref() == Some("openshift/cluster-network-operator") && c.id != culprit)
        .filter(|c| c.payload.as_deref() == Some(tag.as_str()))
        .filter(|c| ["Update owners for the operator", "Drop deprecated flag handling"].contains(&c.title.as_str()))
        .map(|c| c.id.clone())
        .collect();
    assert!(neighbours.len() >= 2, "{neighbours:?}");
    let tie = a
        .root_causes
        .iter()
        .flat_map(|r| r.ties.iter())
        .find(|t| neighbours.iter().all(|n| t.candidates.contains(n)))
        .unwrap_or_else(|| {
            panic!("no tie of {neighbours:?}: {:#?}", a.root_causes.iter().map(|r| &r.ties).collect::<Vec<_>>())
        });
    assert!(tie.rank > 1 && !tie.separate_by.is_empty(), "{tie:?}");
    for n in &neighbours {
        for s in a.suspects.iter().filter(|s| s.candidate == *n) {
            assert!(!s.tied_with.is_empty() && s.rank > 1, "{s:?}");
        }
    }

    // "Report console plugin load times" shares only the generic word "report"
    // with "... should report Available=True ...": no title link, no score.
    let report = a.candidates.iter().find(|c| c.title.starts_with("Report console")).expect("the decoy");
    assert!(
        a.scores
            .iter()
            .filter(|s| s.candidate == report.id)
            .all(|s| s.items.iter().all(|i| i.signal != Signal::TitleMatch)),
        "a title link on a generic word"
    );
    assert!(!a.suspects.iter().any(|s| s.candidate == report.id), "the decoy is a suspect");

    // The aggregated job's network area failed at once: one root cause, its tests as symptoms.
    let agg: Vec<_> = a.root_causes.iter().filter(|r| r.jobs.iter().any(|j| j.starts_with("aggregated-"))).collect();
    assert_eq!(agg.len(), 1, "{:#?}", agg.iter().map(|r| (&r.id, &r.title)).collect::<Vec<_>>());
    assert!(agg[0].symptoms.len() >= 6, "{:#?}", agg[0].symptoms);
    assert!(a.root_causes.len() <= a.failed_jobs.len() || a.root_causes.iter().all(|r| r.apart.is_some()));

    // The reports say it: ties with `=`, the symptoms under their root cause.
    let md = citriage_payload::render_markdown(&a);
    assert!(md.contains("Ties (`=`") && md.contains("One cause, "), "{md}");
    let html = citriage_payload::render_html(&a);
    assert!(html.contains("<b>Ties</b>") && html.contains("One cause, "));
    let json: Value = serde_json::from_str(&citriage_payload::render_json(&a)).unwrap();
    assert!(json["root_causes"].as_array().unwrap().iter().any(|r| !r["ties"].as_array().unwrap().is_empty()));
    assert!(citriage_payload::report::consistency::contradictions(&a, &md).is_empty());
}

#[test]
fn ties_never_follow_input_order() {
    // The same analysis twice is the same report; ranks come from evidence only,
    // so the members of a tie share their rank whatever their ids.
    let dir = tempfile::tempdir().unwrap();
    let (tag, _) = culprit_payload(dir.path());
    let a = analysis(dir.path(), &tag);
    let b = analysis(dir.path(), &tag);
    assert_eq!(citriage_payload::render_json(&a), citriage_payload::render_json(&b));
    for s in &a.suspects {
        for o in a.suspects.iter().filter(|o| o.root_cause == s.root_cause && o.candidate != s.candidate) {
            let same = (s.score.total, s.score.correlation) == (o.score.total, o.score.correlation);
            assert_eq!(same, s.rank == o.rank, "{} / {}", s.candidate, o.candidate);
        }
    }
}
