//! End to end on the recorded test world (see `common`): chain walk, failure
//! modes and onsets, root causes, scoring, actions, `as_of`, determinism and
//! the four outputs.

mod common;

use citriage_payload::action::{CandidateAction, Verdict};
use citriage_payload::classify::FailureClass;
use citriage_payload::release::Phase;
use citriage_payload::result::{OnsetBefore, PayloadAnalysis};
use citriage_payload::scoring::Signal;
use citriage_payload::{
    analyze, render_html, render_json, render_markdown, render_results_yaml, AnalyzeOptions, GcsMirror, RecordedDir,
};
use common::*;

fn run_in(
    world: &std::path::Path,
    tag: &str,
    as_of: Option<&str>,
) -> Result<PayloadAnalysis, citriage_payload::PayloadError> {
    let src = RecordedDir::open(world);
    let ev = GcsMirror::new(world.join("gcs"));
    let mut opts = AnalyzeOptions::new(tag);
    opts.as_of = as_of.map(str::to_string);
    analyze(&src, &ev, &opts)
}

fn run(tag: &str, as_of: Option<&str>) -> PayloadAnalysis {
    let dir = tempfile::tempdir().unwrap();
    let world = build_world(dir.path());
    run_in(&world, tag, as_of).unwrap()
}

fn suspect<'a>(a: &'a PayloadAnalysis, id: &str) -> Option<&'a citriage_payload::result::Suspect> {
    a.suspects.iter().find(|s| s.candidate == id)
}

#[test]
fn chain_walks_past_force_accepted_payload() {
    let a = run(T4, None);
    let tags: Vec<&str> = a.history.iter().map(|r| r.tag.as_str()).collect();
    assert_eq!(tags, vec![T4, T3, T2, T1, T0]);
    // T1 is Accepted but azure-ovn failed: not green, the walk goes on.
    let t1 = &a.history[3];
    assert_eq!(t1.phase, Phase::Accepted);
    assert!(t1.force_accepted && !t1.all_blocking_green);
    assert_eq!(a.baseline.as_deref(), Some(T0));
    assert!(a.history[4].all_blocking_green);
    assert_eq!(a.last_accepted.as_deref(), Some(T1));
    assert_eq!(a.hours_since_baseline, Some(48.0));
    assert_eq!(a.blocking.failed, 5);
    assert_eq!(a.blocking.describe(), "1 passed, 5 failed");
    // New PRs vs T3, cumulative since T0 (from the ?from= changelog).
    assert_eq!(a.new_prs.prs.iter().map(|p| p.number).collect::<Vec<_>>(), vec![104]);
    assert_eq!(a.cumulative_prs.prs.len(), 6);
    assert!(a.cumulative_prs.how.contains("from"), "{}", a.cumulative_prs.how);
}

#[test]
fn streak_is_split_by_failure_mode() {
    let a = run(T4, None);
    let j = a.failed_jobs.iter().find(|j| j.name == "aws-ovn").unwrap();
    // The job has failed since T2, but T2 was an infrastructure failure.
    assert_eq!(j.streak.pattern, "F F F S S");
    assert_eq!(j.streak.length, 3);
    assert_eq!(j.streak.originating.as_deref(), Some(T2));
    let m = &j.modes[0];
    assert_eq!(m.first_failed_in, T3);
    assert_eq!(m.payloads_failing, 2);
    assert!(matches!(&m.before, OnsetBefore::DifferentFailure(t, _) if t == T2));
    assert_eq!(j.tests[0].first_failed_in, T3);
    assert!(j.tests[0].onset_certain);
    // Retries and previous attempts.
    assert_eq!(j.retries, 1);
    assert_eq!(j.previous_attempts.len(), 1);
    assert_eq!(j.previous_attempts[0].same_failure, Some(true));
    // Pass rate from the release infos (no job-run records in this world).
    let pr = j.pass_rate.as_ref().unwrap();
    assert_eq!((pr.current.passes, pr.current.runs), (2, 6));
}

#[test]
fn root_causes_classes_and_context() {
    let a = run(T4, None);
    let rc_of = |job: &str| {
        let j = a.failed_jobs.iter().find(|j| j.name == job).unwrap();
        a.root_causes.iter().find(|r| r.id == j.modes[0].root_cause).unwrap()
    };
    let culprit = rc_of("aws-ovn");
    assert_eq!(culprit.jobs, vec!["aws-ovn", "gcp-ovn"]);
    assert_eq!(culprit.class.class, FailureClass::ProductRegression);
    assert!(culprit.is_systemic);
    assert_eq!(culprit.systemic.len(), 1);
    assert_eq!(culprit.systemic[0].job, "vsphere-ovn");
    assert_eq!(culprit.systemic[0].lifecycle, "informing");
    assert_eq!(rc_of("aws-ovn-fips").class.class, FailureClass::CiConfiguration);
    assert_eq!(rc_of("aws-ovn-upgrade").class.class, FailureClass::ProductRegression);
    // No JUnit, no log: unknown, not green, and never a revert.
    let unknown = rc_of("metal-ipi");
    assert_eq!(unknown.class.class, FailureClass::Unknown);
    assert!(unknown.no_candidate_reason.is_some());
    assert!(
        a.data_gaps.iter().any(|g| g.contains("metal-ipi") && g.contains("unknown, not green")),
        "{:?}",
        a.data_gaps
    );
}

#[test]
fn verbatim_match_scores_40_and_quotes_both_lines() {
    let a = run(T4, None);
    let s = suspect(&a, "pr:openshift/widget-operator#101").unwrap();
    assert_eq!(s.rank, 1);
    assert_eq!(s.score.total, 100);
    let em = s.score.error_match.as_ref().unwrap();
    assert_eq!(em.diff_file, "pkg/widget/status.go");
    assert_eq!(em.diff_line, 12);
    assert_eq!(em.diff_text, CULPRIT_DIFF_LINE);
    assert!(em.log.text.contains(&em.token));
    assert!(em.log.at.line.is_some());
    let item = s.score.items.iter().find(|i| i.signal == Signal::ErrorMessageMatch).unwrap();
    assert_eq!(item.points, 40);
    assert!(s.score.items.iter().any(|i| i.signal == Signal::NewFailureMode && i.points == 30));
    assert!(s.score.items.iter().any(|i| i.signal == Signal::MultiJobCorrelation && i.points == 10));
    assert_eq!(s.action, CandidateAction::StageRevert);
    // The near miss (a similar symbol and a paraphrased message) earns nothing.
    assert!(suspect(&a, "pr:openshift/cluster-widget-api#102").is_none());
    let near: Vec<_> = a.scores.iter().filter(|s| s.candidate == "pr:openshift/cluster-widget-api#102").collect();
    assert!(!near.is_empty());
    assert!(near.iter().all(|s| s.total == 0 && s.error_match.is_none()));
    // Both lines appear in the HTML and Markdown reports.
    let html = render_html(&a);
    assert!(html.contains("allowedReasons = []string{&quot;Ready&quot;, &quot;StaleGeneration&quot;}"));
    assert!(
        html.contains("reconcileWidgetStatus: status.conditions[0].reason &quot;StaleGeneration&quot; is not allowed")
    );
    let md = render_markdown(&a);
    assert!(md.contains("pkg/widget/status.go:12"));
}

#[test]
fn rhcos_rpm_is_escalated_never_reverted() {
    let a = run(T4, None);
    let s = suspect(&a, "rpm:rhel-coreos/systemd").unwrap();
    assert!(s.score.total >= 60, "{}", s.score.total);
    assert_eq!(s.action, CandidateAction::EscalateRhcos);
    // The subpackage with the same version bump is one logical change.
    assert!(a.candidate("rpm:rhel-coreos/systemd-udev").is_none());
    let yaml = render_results_yaml(&a);
    assert!(yaml.contains("type: \"rhcos_rpm\"") && yaml.contains("package: \"systemd\""));
}

#[test]
fn ci_configuration_change_is_a_candidate() {
    let a = run(T4, None);
    let s = suspect(&a, "ci:openshift/release@1a2b3c4d5e6f").unwrap();
    assert_eq!(s.score.total, 100);
    assert_eq!(s.action, CandidateAction::StageRevert);
    assert_eq!(s.score.error_match.as_ref().unwrap().token, "--log-level-v2");
    // Landed after the failing run: not a candidate. Unrelated: scored 0.
    assert!(a.candidate("ci:openshift/release@feedfacecafe").is_none());
    assert!(suspect(&a, "ci:openshift/release@99aa88bb77cc").is_none());
    // Payload PRs do not explain a CI-configuration failure.
    let mco: Vec<_> = a.scores.iter().filter(|s| s.candidate == "pr:openshift/machine-config-operator#104").collect();
    assert!(mco.iter().all(|s| s.total == 0));
    assert_eq!(a.decision.verdict, Verdict::StageRevert);
}

#[test]
fn infrastructure_scores_nothing_and_may_force_accept() {
    let a = run(T2, None);
    assert_eq!(a.failed_jobs.len(), 1);
    let rc = &a.root_causes[0];
    assert_eq!(rc.class.class, FailureClass::Infrastructure);
    assert!(rc.class.temporary);
    assert!(rc.class.evidence.as_ref().unwrap().text.contains("VcpuLimitExceeded"));
    assert!(a.suspects.is_empty());
    assert!(a.scores.iter().all(|s| s.total == 0 && s.note.as_deref().unwrap_or("").contains("infrastructure")));
    assert_eq!(a.decision.verdict, Verdict::ReportOnly);
    // 1 failed job, temporary infrastructure, baseline 24 h old, not accepted.
    assert!(a.decision.force_accept.recommended, "{:?}", a.decision.force_accept.reasons);
    assert_eq!(a.hours_since_baseline, Some(24.0));
    let yaml = render_results_yaml(&a);
    assert!(
        yaml.contains("failure_type: \"infra\"")
            && yaml.contains("candidates: []")
            && yaml.contains("force_accept_recommended: true")
    );
}

#[test]
fn as_of_hides_later_events() {
    let a = run(T4, Some("2026-03-04T10:00:00Z"));
    // T5 (created 20:00) is not in the history; jobs that finished after 10:00 are pending.
    assert_eq!(a.history[0].tag, T4);
    assert!(a.history.iter().all(|r| r.tag != T5));
    assert_eq!(a.payload.phase, Phase::Ready);
    assert_eq!(a.payload.as_of.as_deref(), Some("2026-03-04T10:00:00Z"));
    let failed: Vec<&str> = a.failed_jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(failed, vec!["aws-ovn", "aws-ovn-fips", "aws-ovn-upgrade"]);
    assert_eq!(a.pending_jobs, vec!["gcp-ovn", "metal-ipi"]);
    assert_eq!(a.window.as_ref().unwrap().anchor, "2026-03-04T10:00:00Z");
    // Without gcp-ovn the culprit loses its multi-job point (the total stays capped at 100).
    let s = suspect(&a, "pr:openshift/widget-operator#101").unwrap();
    assert_eq!(s.jobs, vec!["aws-ovn"]);
    assert!(s.score.items.iter().all(|i| i.signal != Signal::MultiJobCorrelation));
    assert_eq!(s.score.items.iter().map(|i| i.points).sum::<u32>(), 100);
    // The informing vsphere-ovn finished at 11:20: not known yet.
    assert!(a.informing_failures.is_empty());
    // A cutoff before the payload existed is an error.
    let dir = tempfile::tempdir().unwrap();
    let world = build_world(dir.path());
    let e = run_in(&world, T4, Some("2026-03-04T07:00:00Z")).unwrap_err();
    assert!(e.to_string().contains("after the as-of time"), "{e}");
}

#[test]
fn reports_are_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let world = build_world(dir.path());
    let a1 = run_in(&world, T4, None).unwrap();
    let a2 = run_in(&world, T4, None).unwrap();
    let out1 = dir.path().join("out1");
    let out2 = dir.path().join("out2");
    let f1 = citriage_payload::write_reports(&a1, &out1).unwrap();
    let f2 = citriage_payload::write_reports(&a2, &out2).unwrap();
    assert_eq!(f1.len(), 4);
    for (x, y) in f1.iter().zip(&f2) {
        assert_eq!(x.file_name(), y.file_name());
        assert_eq!(std::fs::read(x).unwrap(), std::fs::read(y).unwrap(), "{} differs", x.display());
    }
    // The JSON twin is the analysis itself (diff bodies aside).
    let back: PayloadAnalysis = serde_json::from_str(&render_json(&a1)).unwrap();
    assert_eq!(render_json(&back), render_json(&a1));
}

#[test]
fn outputs_have_every_section() {
    let a = run(T4, None);
    let html = render_html(&a);
    for id in [
        "summary",
        "history",
        "failed-jobs",
        "root-causes",
        "suspects",
        "context",
        "action",
        "recommendations",
        "data-gaps",
    ] {
        assert!(html.contains(&format!("<section id=\"{id}\">")), "missing section {id}");
    }
    assert!(!html.to_ascii_lowercase().contains("<script"));
    assert!(html.contains("STAGE REVERT"));
    let md = render_markdown(&a);
    for h in [
        "## Executive summary",
        "## Payload history",
        "## Failed blocking jobs",
        "## Root causes",
        "## Suspect changes",
        "## Broader context",
        "## Action taken",
        "## Recommendations",
    ] {
        assert!(md.contains(h), "missing {h}");
    }
    let yaml = render_results_yaml(&a);
    assert!(yaml.starts_with("metadata:\n  payload_tag: \"4.22.0-0.nightly-2026-03-04-080000\""));
    assert!(yaml.contains("  - job_name: \"periodic-ci-openshift-release-main-nightly-4.22-e2e-aws-ovn\""));
    assert!(yaml.contains("    originating_payload_tag: \"4.22.0-0.nightly-2026-03-03-200000\""));
    assert!(yaml.contains("    pr_number: 101\n"));
    assert!(yaml.contains("    confidence_score: 100\n"));
    assert!(yaml.contains("      error_message_match: +40"));
    assert!(yaml.contains("    actions: []"));
}

#[test]
fn ci_text_is_escaped() {
    use citriage_payload::evidence::{JunitState, Location, RunEvidence, StaticEvidence, TestFailure, TestKind};
    let dir = tempfile::tempdir().unwrap();
    let world = build_world(dir.path());
    let mut ev = RunEvidence::empty(&prow_url("aws-ovn", 2, 0));
    ev.junit = JunitState::Found { files: 1 };
    ev.failures.push(TestFailure {
        name: "<img src=x onerror=alert(1)>".into(),
        suite: "s".into(),
        message: "boom <script>alert('x')</script> | `tick`".into(),
        text: "boom <script>alert('x')</script> | `tick`".into(),
        kind: TestKind::Failure,
        is_step: false,
        at: Location { file: "j.xml".into(), url: Some("javascript:alert(1)".into()), line: Some(3) },
        hint: None,
    });
    let mut map = std::collections::BTreeMap::new();
    map.insert(prow_url("aws-ovn", 2, 0), ev);
    let src = RecordedDir::open(&world);
    let a = analyze(&src, &StaticEvidence(map), &AnalyzeOptions::new(T2)).unwrap();
    let html = render_html(&a);
    assert!(!html.contains("<script>alert"));
    assert!(!html.contains("<img src=x"));
    assert!(!html.contains("href=\"javascript:"));
    assert!(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"));
    // Markdown: CI text is either escaped or inside code spans (literal there).
    let md = render_markdown(&a);
    let no_double = regex::Regex::new(r"``.*?``").unwrap().replace_all(&md, "");
    let outside_code = regex::Regex::new(r"`[^`\n]*`").unwrap().replace_all(&no_double, "").into_owned();
    // A backslash-escaped `\<` is literal text in Markdown; a bare one could open a tag.
    let bare = outside_code.replace("\\<", "");
    assert!(!bare.contains("<script") && !bare.contains("<img"), "{outside_code}");
    assert!(outside_code.contains("\\<script") || outside_code.contains("\\<img"), "CI markup shown as text");
}

#[test]
fn job_runs_and_sippy_give_pass_rates() {
    let dir = tempfile::tempdir().unwrap();
    let world = build_world(dir.path());
    let aws = job_prow("aws-ovn");
    // Job runs (BigQuery export shape): 1/4 in the week up to the newest start, 2/3 the week before.
    let mut rows = Vec::new();
    for (tag, state, start) in [
        (T4, "failure", "2026-03-04T09:00:00"),
        (T3, "failure", "2026-03-03T21:00:00"),
        (T2, "failure", "2026-03-03T09:00:00"),
        (T0, "success", "2026-03-02T09:00:00"),
        ("4.22.0-0.nightly-2026-02-24-080000", "success", "2026-02-24T09:00:00"),
        ("4.22.0-0.nightly-2026-02-23-080000", "success", "2026-02-23T09:00:00"),
        ("4.22.0-0.nightly-2026-02-22-080000", "error", "2026-02-22T09:00:00"),
    ] {
        rows.push(serde_json::json!({"release_verify_tag": tag, "prowjob_job_name": aws, "prowjob_state": state,
            "prowjob_url": "https://prow.ci.openshift.org/view/gs/x/logs/j/1", "prowjob_start": start, "prowjob_completion": null}));
    }
    std::fs::write(world.join("job-runs.json"), serde_json::to_string(&rows).unwrap()).unwrap();
    std::fs::create_dir_all(world.join("sippy")).unwrap();
    std::fs::write(
        world.join("sippy/jobs.json"),
        serde_json::json!([{"name": job_prow("gcp-ovn"), "current_pass_percentage": 50.0, "current_runs": 10, "previous_pass_percentage": 90.0, "previous_runs": 10}]).to_string(),
    )
    .unwrap();
    let a = run_in(&world, T4, None).unwrap();
    let j = a.failed_jobs.iter().find(|j| j.name == "aws-ovn").unwrap();
    let pr = j.pass_rate.as_ref().unwrap();
    assert_eq!(pr.source, "job runs");
    assert_eq!((pr.current.passes, pr.current.runs), (1, 4));
    assert_eq!((pr.previous.passes, pr.previous.runs), (2, 3));
    assert_eq!(a.window.as_ref().unwrap().anchor, "2026-03-04T09:00:00Z");
    // The streak goes past the chain with the recorded runs.
    assert!(j.streak.pattern.starts_with("F F F S S"), "{}", j.streak.pattern);
    let g = a.failed_jobs.iter().find(|j| j.name == "gcp-ovn").unwrap().pass_rate.as_ref().unwrap();
    assert_eq!(g.source, "sippy");
    assert_eq!((g.current.passes, g.previous.passes), (5, 9));
    assert_eq!(g.trend, citriage_payload::jobhistory::Trend::Degrading);
}

#[test]
fn ci_changes_from_a_git_checkout() {
    if std::process::Command::new("git").arg("--version").output().is_err() {
        eprintln!("skipped: git is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let world = build_world(dir.path());
    std::fs::remove_file(world.join("ci-config/changes.json")).unwrap();
    let repo = dir.path().join("release");
    let step = repo.join("ci-operator/step-registry/ipi/install/install");
    std::fs::create_dir_all(&step).unwrap();
    let git = |args: &[&str], date: &str| {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(args)
            .env("GIT_AUTHOR_DATE", date)
            .env("GIT_COMMITTER_DATE", date)
            .env("GIT_AUTHOR_NAME", "ci")
            .env("GIT_AUTHOR_EMAIL", "ci@example.com")
            .env("GIT_COMMITTER_NAME", "ci")
            .env("GIT_COMMITTER_EMAIL", "ci@example.com")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    git(&["init", "-q"], "2026-03-01T00:00:00Z");
    std::fs::write(
        step.join("ipi-install-install-commands.sh"),
        "echo installing\nopenshift-install create cluster --dir \"$DIR\"\n",
    )
    .unwrap();
    git(&["add", "."], "2026-03-01T00:00:00Z");
    git(&["commit", "-q", "-m", "initial"], "2026-03-01T00:00:00Z");
    std::fs::write(
        step.join("ipi-install-install-commands.sh"),
        "echo installing\nopenshift-install create cluster --dir \"$DIR\" --log-level-v2=debug\n",
    )
    .unwrap();
    git(&["commit", "-q", "-am", "ipi-install: pass the new log level flag (#7001)"], "2026-03-04T02:00:00Z");
    let src = RecordedDir::open(&world);
    let ev = GcsMirror::new(world.join("gcs"));
    let mut opts = AnalyzeOptions::new(T4);
    opts.ci_config_changes = Some(repo.clone());
    let a = analyze(&src, &ev, &opts).unwrap();
    let s = a.suspects.iter().find(|s| a.candidate(&s.candidate).is_some_and(|c| c.number == Some(7001))).unwrap();
    assert_eq!(s.score.total, 100);
    let m = s.score.error_match.as_ref().unwrap();
    assert_eq!(
        (m.diff_file.as_str(), m.diff_line),
        ("ci-operator/step-registry/ipi/install/install/ipi-install-install-commands.sh", 2)
    );
    assert_eq!(
        a.candidate(&s.candidate).unwrap().url.as_deref(),
        Some("https://github.com/openshift/release/pull/7001")
    );
}
