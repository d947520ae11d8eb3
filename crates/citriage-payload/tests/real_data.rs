//! The real release-controller response (OCPCRT-74, 4.12.1) and the real job
//! history over 52 `4.22.0-0.nightly` payloads, read from the shared data
//! directory beside the checkout. Skipped (with a message) when it is absent.

use std::path::PathBuf;

use citriage_payload::jobhistory::{self, PassRate, Trend};
use citriage_payload::release::{self, ChangeLogHtml, ChangeLogState, JobState, Phase};

fn shared(rel: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data").join(rel);
    if p.is_file() {
        Some(p)
    } else {
        eprintln!("skipped: {} is absent (shared data not next to the checkout)", p.display());
        None
    }
}

#[test]
fn ocpcrt_74_release_info() {
    let Some(p) = shared("openshift/sippy/OCPCRT-74-pr-test.json") else { return };
    let bytes = std::fs::read(&p).unwrap();
    let r = release::parse_release_info(&bytes, &p.display().to_string()).unwrap();
    assert_eq!(r.name, "4.12.1");
    assert_eq!(r.phase, Phase::Accepted);

    // Jobs: omitted retries / transitionTime, Prow job names from the URLs.
    assert_eq!(r.results.blocking.len(), 2);
    assert_eq!(r.results.informing.len(), 4);
    assert!(r.all_blocking_succeeded());
    let up = &r.results.blocking["upgrade"];
    assert_eq!(up.state, JobState::Succeeded);
    assert_eq!(up.retries, 0);
    assert!(up.previous_attempt_urls.is_empty());
    assert_eq!(up.transition_time, None);
    assert_eq!(up.prow_job().as_deref(), Some("release-openshift-origin-installer-e2e-aws-upgrade"));
    let serial = &r.results.informing["aws-sdn-serial"];
    assert_eq!(serial.retries, 2);
    assert_eq!(serial.transition_time.as_deref(), Some("2023-01-25T19:11:56Z"));
    assert_eq!(r.results.informing["install-analysis-all"].transition_time, None);

    // Upgrades: capitalised keys.
    assert_eq!(r.upgrades_to.len(), 18);
    assert_eq!(r.upgrades_from.len(), 3);
    let e = &r.upgrades_to[1];
    assert_eq!((e.from.as_str(), e.to.as_str(), e.success, e.failure, e.total), ("4.12.0-rc.4", "4.12.1", 0, 1, 1));
    assert_eq!(e.history.values().next().unwrap().state, JobState::Failed);

    // The base64 changelog decodes to HTML.
    match &r.change_log_html {
        ChangeLogHtml::Html(h) => assert!(h.starts_with("<h2>Changes from"), "{}", &h[..60]),
        other => panic!("changeLog not decoded: {other:?}"),
    }

    // The JSON changelog: images, PRs per image.
    let ChangeLogState::Ready(cl) = &r.change_log else { panic!("no changeLogJson") };
    assert_eq!(cl.from.name, "4.12.0");
    assert_eq!(cl.to.name, "4.12.1");
    assert_eq!(cl.updated_images.len(), 24);
    assert_eq!(cl.rebuilt_images.len(), 15);
    assert_eq!(cl.updated_images.iter().map(|i| i.commits.len()).sum::<usize>(), 75);
    assert_eq!(cl.components[0].name, "Kubernetes");
    assert_eq!(cl.components[1].from.as_deref(), Some("412.86.202301061548-0"));
    let prs = cl.pull_requests();
    assert_eq!(prs.len(), 75);
    let installer: Vec<_> = prs.iter().filter(|p| p.repo == "installer").collect();
    assert_eq!(installer.len(), 7);
    assert_eq!(installer[0].images, vec!["baremetal-installer", "installer", "installer-artifacts"]);
    assert!(prs.iter().any(|p| p.url == "https://github.com/openshift/installer/pull/6706"
        && p.title == "Set ip=dhcp,dhcp6 for master nodes on dualstack"));
    assert!(prs.iter().any(|p| p.org == "operator-framework" && p.repo == "operator-marketplace"));
}

#[test]
fn bquxjob_pass_rates_trends_streaks() {
    let Some(p) = shared("openshift/release-controller/bquxjob_65df743f_19de556b6a3.json") else { return };
    let runs = jobhistory::parse_job_runs(&std::fs::read(&p).unwrap(), &p.display().to_string()).unwrap();
    assert_eq!(runs.len(), 204);
    let anchor = jobhistory::default_anchor(&runs).unwrap();
    assert_eq!(citriage_model::time::rfc3339(anchor), "2026-05-01T13:29:05Z");
    let rates = jobhistory::pass_rates(&runs, anchor, 7);
    let console = &rates["periodic-ci-openshift-release-main-nightly-4.22-console-aws"];
    assert_eq!(console.current, PassRate { passes: 10, runs: 24 });
    assert_eq!(console.previous, PassRate { passes: 8, runs: 25 });
    assert_eq!(console.current.percent(), Some(41.7));
    assert_eq!(console.previous.percent(), Some(32.0));
    assert_eq!(console.current.describe(), "10/24 = 41.7%");
    assert_eq!(console.delta_pp, Some(9.7));
    assert_eq!(console.trend, Trend::Improving);
    let csi = &rates["periodic-ci-openshift-release-main-nightly-4.22-e2e-aws-csi"];
    assert_eq!((csi.current, csi.previous), (PassRate { passes: 21, runs: 24 }, PassRate { passes: 25, runs: 25 }));
    assert_eq!(csi.trend, Trend::Degrading);
    let dtk = &rates["periodic-ci-openshift-release-main-nightly-4.22-e2e-aws-driver-toolkit"];
    assert_eq!((dtk.current, dtk.previous), (PassRate { passes: 26, runs: 26 }, PassRate { passes: 25, runs: 28 }));
    let fips = &rates["periodic-ci-openshift-release-main-nightly-4.22-fips-payload-scan"];
    assert_eq!(
        (fips.current, fips.previous, fips.trend),
        (PassRate { passes: 26, runs: 26 }, PassRate { passes: 26, runs: 26 }, Trend::Stable)
    );

    // Completion time instead of start time would give 10/23: the window is by start.
    let by_completion: Vec<_> = runs
        .iter()
        .cloned()
        .map(|mut r| {
            r.started = r.completed;
            r
        })
        .collect();
    let alt = jobhistory::pass_rates(&by_completion, anchor, 7);
    assert_eq!(
        alt["periodic-ci-openshift-release-main-nightly-4.22-console-aws"].current,
        PassRate { passes: 10, runs: 23 }
    );

    // Streaks and patterns, newest payload first.
    let streaks = jobhistory::streaks(&runs);
    let s = &streaks["periodic-ci-openshift-release-main-nightly-4.22-console-aws"];
    assert!(s.pattern.starts_with("F S S F S F F F S S F F S F F S S F F F"), "{}", s.pattern);
    assert_eq!(s.length, 1);
    assert_eq!(s.originating.as_deref(), Some("4.22.0-0.nightly-2026-05-01-132406"));
    assert_eq!(s.payloads.len(), 49);

    // as_of moves the windows: nothing after the cutoff leaks in.
    let cut = citriage_model::time::parse_rfc3339("2026-04-24T13:29:05Z").unwrap();
    let early = jobhistory::filter_as_of(runs.clone(), Some(cut));
    assert!(early.iter().all(|r| r.started.unwrap() <= cut));
    let r2 = jobhistory::pass_rates(&early, cut, 7);
    assert_eq!(
        r2["periodic-ci-openshift-release-main-nightly-4.22-console-aws"].current,
        PassRate { passes: 8, runs: 25 }
    );
}

#[test]
fn ocpcrt_74_through_the_pipeline() {
    // The real response served from a recorded directory (built at test time).
    let Some(p) = shared("openshift/sippy/OCPCRT-74-pr-test.json") else { return };
    let dir = tempfile::tempdir().unwrap();
    let rel = dir.path().join("api/v1/releasestream/4-stable");
    std::fs::create_dir_all(rel.join("release")).unwrap();
    std::fs::copy(&p, rel.join("release/4.12.1.json")).unwrap();
    std::fs::write(
        rel.join("tags.json"),
        r#"{"name":"4-stable","tags":[{"name":"4.12.1","phase":"Accepted","pullSpec":"","downloadURL":""},{"name":"4.12.0","phase":"Accepted","pullSpec":"","downloadURL":""}]}"#,
    )
    .unwrap();
    let src = citriage_payload::RecordedDir::open(dir.path());
    let mut opts = citriage_payload::AnalyzeOptions::new("4.12.1");
    opts.stream = Some("4-stable".into());
    let a = citriage_payload::analyze(&src, &citriage_payload::NoEvidence, &opts).unwrap();
    assert!(a.failed_jobs.is_empty());
    assert_eq!(a.blocking.describe(), "2/2 passed");
    // No ?from= file: the changelog embedded in the release info covers 4.12.0 → 4.12.1.
    assert_eq!(a.new_prs.from.as_deref(), Some("4.12.0"));
    assert_eq!(a.new_prs.prs.len(), 75);
    assert_eq!(a.decision.verdict, citriage_payload::action::Verdict::ReportOnly);
    assert!(!a.decision.force_accept.recommended);
    let html = citriage_payload::render_html(&a);
    assert!(html.contains("No blocking job failed."));
}
