//! The HTTP source against a local server emulating the release controller,
//! quirks included: a 429 with `Retry-After` before the tag list, a changelog
//! that is "still loading", omitted fields, empty URLs, 404s.

mod common;

use std::time::{Duration, Instant};

use citriage_payload::release::ChangeLogState;
use citriage_payload::{
    analyze, AnalyzeOptions, GcsMirror, HttpConfig, HttpSource, PayloadError, PayloadSource, RecordedDir,
};
use common::server::serve;
use common::*;

fn fast() -> HttpConfig {
    HttpConfig {
        timeout: Duration::from_secs(10),
        attempts: 3,
        backoff: Duration::from_millis(10),
        max_retry_after: Duration::from_secs(5),
        max_bytes: 1 << 24,
    }
}

#[test]
fn retries_429_honouring_retry_after_then_analyzes() {
    let dir = tempfile::tempdir().unwrap();
    let world = build_world(dir.path());
    let srv = serve(world.clone(), 1, "1");
    let src = HttpSource::new(&srv.base, fast()).unwrap().with_github_diffs(&format!("{}/github", srv.base)).unwrap();
    let started = Instant::now();
    let tags = src.tags(STREAM).unwrap();
    assert!(started.elapsed() >= Duration::from_millis(950), "Retry-After not honoured: {:?}", started.elapsed());
    assert_eq!(srv.hits.lock().unwrap().iter().filter(|u| u.ends_with("/tags")).count(), 2);
    // The server listed tags oldest first; the list is newest first.
    assert_eq!(tags.tags[0].name, T5);
    assert_eq!(tags.tags[5].name, T0);

    // Quirks in the release info: empty URLs, omitted retries / informing jobs.
    let t5 = src.release(STREAM, T5).unwrap();
    assert!(t5.results.blocking.values().all(|j| j.url.is_none() && j.retries == 0));
    let t2 = src.release(STREAM, T2).unwrap();
    assert!(t2.results.informing.is_empty());
    // The typed "still loading" changelog.
    let cl = src.changelog(STREAM, T4, T0).unwrap();
    assert!(matches!(&cl.state, ChangeLogState::Loading(m) if m.contains("still loading")), "{:?}", cl.state);
    // 404 is NotFound.
    let e = src.release(STREAM, "4.22.0-0.nightly-2026-01-01-000000").unwrap_err();
    assert!(e.is_not_found(), "{e}");

    // The whole analysis over HTTP agrees with the recorded directory.
    let ev = GcsMirror::new(world.join("gcs"));
    let mut opts = AnalyzeOptions::new(T4);
    opts.release_controller_url = Some(srv.base.clone());
    // CI-configuration changes are not served over HTTP: online they come from
    // `--ci-config FILE`, the recorded list the offline run finds in its folder.
    opts.ci_config_changes = Some(world.join("ci-config/changes.json"));
    let over_http = analyze(&src, &ev, &opts).unwrap();
    let offline = analyze(&RecordedDir::open(&world), &ev, &AnalyzeOptions::new(T4)).unwrap();
    assert_eq!(over_http.decision, offline.decision, "online and offline verdicts differ");
    assert!(offline.suspects.iter().any(|s| s.candidate.contains("1a2b3c4d")), "{:?}", offline.suspects);
    assert_eq!(over_http.suspects, offline.suspects);
    assert_eq!(over_http.root_causes, offline.root_causes);
    assert_eq!(over_http.history, offline.history);
    // The cumulative changelog fell back to the union of the hops.
    assert_eq!(over_http.cumulative_prs.prs, offline.cumulative_prs.prs);
    assert!(over_http.cumulative_prs.how.contains("union"), "{}", over_http.cumulative_prs.how);
    assert!(over_http.data_gaps.iter().any(|g| g.contains("still loading")), "{:?}", over_http.data_gaps);
    assert!(over_http.payload.release_url.starts_with(&srv.base));
}

#[test]
fn retry_after_beyond_the_cap_fails_with_a_named_error() {
    let dir = tempfile::tempdir().unwrap();
    let world = build_world(dir.path());
    let srv = serve(world, 5, "3600");
    let src = HttpSource::new(&srv.base, fast()).unwrap();
    let e = src.tags(STREAM).unwrap_err();
    match &e {
        PayloadError::Http { url, status, detail } => {
            assert_eq!(*status, 429);
            assert!(url.ends_with("/tags") && detail.contains("3600"), "{e}");
        }
        other => panic!("{other}"),
    }
}

#[test]
fn persistent_throttling_gives_up_after_bounded_attempts() {
    let dir = tempfile::tempdir().unwrap();
    let world = build_world(dir.path());
    let srv = serve(world, 100, "0");
    let src = HttpSource::new(&srv.base, fast()).unwrap();
    let e = src.tags(STREAM).unwrap_err();
    assert!(matches!(e, PayloadError::Http { status: 429, .. }), "{e}");
    assert_eq!(srv.hits.lock().unwrap().len(), 3);
}

#[test]
fn only_the_configured_host_is_contacted() {
    let src = HttpSource::new("http://127.0.0.1:9", fast()).unwrap();
    assert!(matches!(src.get("http://example.org/api"), Err(PayloadError::ForeignHost { .. })));
    // Nothing listens on port 9: a transport error naming the URL.
    let e = src.tags(STREAM).unwrap_err();
    assert!(e.to_string().contains("127.0.0.1:9"), "{e}");
}

/// A synthetic world's payload stream served by the release-controller-shaped server
/// (PR diffs under `/github`), its artifacts from the local mirror and its
/// CI-configuration changes from `--ci-config` (a list whose diffs are files relative
/// to the world's root): every payload gets the verdict, suspects and root causes the
/// offline run of the same folder gives.
#[test]
fn online_and_offline_runs_of_a_world_give_the_same_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let params = citriage_synth::SynthParams::preset("tiny").expect("tiny preset");
    citriage_synth::generate(&params, dir.path(), &mut |_| {}).expect("generate the world");
    let world = dir.path().to_path_buf();
    let srv = serve(world.clone(), 0, "0");
    let src = HttpSource::new(&srv.base, fast()).unwrap().with_github_diffs(&format!("{}/github", srv.base)).unwrap();
    let recorded = RecordedDir::open(&world);
    let ev = GcsMirror::new(world.join("gcs"));
    let streams = std::fs::read_dir(world.join("release-controller/api/v1/releasestream")).unwrap();
    let mut compared = 0;
    let mut verdicts = std::collections::BTreeSet::new();
    let mut markdown_comparisons = 0;
    for stream in streams.flatten() {
        let stream = stream.file_name().to_string_lossy().into_owned();
        for tag in recorded.tags(&stream).unwrap().tags {
            let mut online_opts = AnalyzeOptions::new(&tag.name);
            online_opts.ci_config_changes = Some(world.join("openshift/ci-config-changes.json"));
            let online = analyze(&src, &ev, &online_opts).unwrap();
            let offline = analyze(&recorded, &ev, &AnalyzeOptions::new(&tag.name)).unwrap();
            assert_eq!(online.decision, offline.decision, "{}: online and offline verdicts differ", tag.name);
            assert_eq!(online.suspects, offline.suspects, "{}", tag.name);
            assert_eq!(online.root_causes, offline.root_causes, "{}", tag.name);
            verdicts.insert(offline.decision.verdict.as_str().to_string());
            // The Markdown reads as written: comparisons not as entities, no sentence
            // cut after "in".
            let md = citriage_payload::render_markdown(&offline);
            assert!(!md.contains("&gt;") && !md.contains("&lt;"), "{}: entities in the Markdown", tag.name);
            for line in md.lines() {
                let l = line.trim_end();
                assert!(!l.ends_with(" in") && !l.ends_with(" in;") && !l.contains(" in ;"), "{}: {l:?}", tag.name);
            }
            markdown_comparisons += md.matches("(> 2)").count() + md.matches("(< 18 h)").count();
            compared += 1;
        }
    }
    eprintln!("{compared} payloads compared; verdicts seen: {verdicts:?}");
    assert!(compared >= 5, "only {compared} payloads");
    assert!(verdicts.len() >= 2, "the stream should exercise several verdicts: {verdicts:?}");
    assert!(markdown_comparisons > 0, "no force-accept comparison was rendered");
    assert!(srv.hits.lock().unwrap().iter().any(|u| u.starts_with("/github/")), "no PR diff was read over HTTP");
}
