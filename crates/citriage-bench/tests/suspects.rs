//! `bench suspects` at a small size: one held-in world of the demo shape, generated
//! with its git histories, ingested, clustered and scored. Every planted pattern is
//! found; no flaky, infrastructure, no-culprit or exposing pattern gets a "likely
//! introducing change"; every culprit is in its window and ranked first alone (the
//! owners story's by its owners link alone, a suspect, no more); the
//! exposing change of the job configuration is named, and so is the image two jobs
//! moved to when the configuration did not change; `act` drafts the revert of the
//! best commit only where it is the likely introducing change (refused below that band
//! and on the flaky and infrastructure patterns).

fn git_available() -> bool {
    std::process::Command::new("git").arg("--version").output().is_ok_and(|o| o.status.success())
}

#[test]
fn the_held_in_world_ranks_each_culprit_first_and_no_false_likely() {
    if !git_available() {
        eprintln!("skipped: git is not installed");
        return;
    }
    let seed = citriage_bench::suspects::HELD_IN[0];
    let w = citriage_bench::suspects::world("demo", seed, 4, false).unwrap();
    assert_eq!(w.stories.len(), 9);
    for s in &w.stories {
        eprintln!(
            "{} ({}): rank {:?}, exposing {:?}: {}",
            s.story, s.kind, s.culprit_rank, s.exposing_found, s.verdict
        );
    }
    for s in &w.stories {
        assert!(s.pattern.is_some(), "{}: no pattern found", s.story);
        assert!(!s.false_likely, "{}: false likely introducing change: {}", s.story, s.verdict);
        // `act` drafts a revert only for a likely introducing change, never elsewhere.
        let likely = s.verdict.contains("likely introducing change:");
        assert_eq!(matches!(s.revert, Some(Ok(_))), likely && s.kind == "culprit", "{}: {:?}", s.story, s.revert);
        // The triage report's line: introduced by the likely change, exposed by the
        // job configuration, unknown otherwise.
        let expected = match s.kind.as_str() {
            "culprit" if likely => "introduced",
            "exposing" => "exposed",
            _ => "unknown",
        };
        assert_eq!(s.blame, expected, "{}: {}", s.story, s.verdict);
        if s.kind == "culprit" {
            assert_eq!(s.culprit_in_window, Some(true), "{}: {}", s.story, s.verdict);
            assert_eq!(s.culprit_rank, Some((1, false)), "{}: {}", s.story, s.verdict);
        }
        if s.kind == "exposing" {
            assert_eq!(s.exposing_found, Some(true), "{}: {}", s.story, s.verdict);
            if s.story == "exposed-by-image-bump" {
                // The configuration did not change: the image the two jobs ran with did.
                assert!(s.verdict.contains("exposed by image gcr.io/"), "{}", s.verdict);
                assert!(s.verdict.contains("in every job's window"), "{}", s.verdict);
            } else {
                assert!(s.verdict.contains("exposed by kubernetes/test-infra@"), "{}", s.verdict);
            }
        }
        if s.story == "culprit-owned-by-sig" {
            // First alone by its owners link only: a suspect, never the likely change.
            assert!(s.verdict.contains("top suspect:") && s.verdict.contains("(suspect)"), "{}", s.verdict);
        }
        if s.kind == "flaky" {
            assert!(s.verdict.contains("flaky before the onset"), "{}", s.verdict);
        }
    }
}
