//! The HTTP source against a local server emulating the release controller,
//! quirks included: a 429 with `Retry-After` before the tag list, a changelog
//! that is "still loading", omitted fields, empty URLs, 404s.

mod common;

use std::time::{Duration, Instant};

use citriage_payload::model::ChangeLogState;
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
    let over_http = analyze(&src, &ev, &opts).unwrap();
    // (CI-configuration changes are not served over HTTP; compare without them.)
    std::fs::remove_file(world.join("ci-config/changes.json")).unwrap();
    let offline = analyze(&RecordedDir::open(&world), &ev, &AnalyzeOptions::new(T4)).unwrap();
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
