//! The verifier over real and planted reports: the seed's two published triage reports
//! (offline: every reference must come back "not checked", none passed), a clean
//! report with zero findings, the same report with planted faults (each caught by the
//! right rule on the right line), and reports in the shape citriage itself writes.

use citriage_github::{
    extract_refs, sweep, Answered, CachedResponse, ClientConfig, GithubClient, HttpCache, IssueRef, IssueState,
    IssueStatus, Mark, MemoryCache, PrState, PrStatus, ReadInfo, RefContext, RefState, RepoRef, StaticResolver,
    SweepOptions,
};
use citriage_verify::rules::{verify, CheckStatus, KnownBuilds, NoBuilds, Resolvers, Verification, VerifyOptions};
use citriage_verify::{render_json, render_markdown, Checkout, Checkouts, NoCode};
use std::path::{Path, PathBuf};
use std::sync::Arc;

// ---- the seed's reports ---------------------------------------------------------------

fn seed_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/seeds/k8s-ci-triage-runbook-and-reports.txt")
}

/// The seed is a web page rendered to text: the failures report starts at its title
/// line, the flakes report at its own title, and the runbook that follows ends the
/// flakes report. Returns (name, first line number in the seed, text).
fn seed_reports() -> Option<Vec<(&'static str, usize, String)>> {
    let path = seed_path();
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("skipping: the seed {} is not available", path.display());
        return None;
    };
    let lines: Vec<&str> = text.lines().collect();
    let find = |prefix: &str| lines.iter().position(|l| l.starts_with(prefix));
    let (Some(f), Some(fl), Some(rb)) = (
        find("Kubernetes CI Failures — Triage Report"),
        find("Kubernetes CI Flakes — Triage Report"),
        find("K8s CI Triage Report Generator"),
    ) else {
        panic!("the seed's layout changed: report titles not found");
    };
    assert!(f < fl && fl < rb);
    Some(vec![("failures", f + 1, lines[f..fl].join("\n")), ("flakes", fl + 1, lines[fl..rb].join("\n"))])
}

fn offline_client() -> GithubClient {
    GithubClient::new(ClientConfig { offline: true, ..Default::default() }, Box::new(MemoryCache::new()))
}

#[test]
fn seed_reports_offline_say_what_they_could_not_check() {
    let Some(reports) = seed_reports() else { return };
    for (name, _, text) in reports {
        let client = offline_client();
        let v =
            verify(&text, &Resolvers { refs: &client, code: &NoCode, builds: &NoBuilds }, &VerifyOptions::default());
        let st = &v.stats;
        assert_eq!(st.format, "rendered", "{name}");
        assert_eq!(st.patterns, 12, "{name}: both reports have Patterns A-L");
        assert!(st.refs_distinct >= 15, "{name}: {st:?}");
        // Nothing was passed: no reference counts as checked, each distinct one is listed.
        assert_eq!(st.refs_checked, 0, "{name}");
        let refs = extract_refs(&text, &RefContext::kubernetes());
        let distinct = citriage_github::unique_refs(&refs);
        for r in &distinct {
            let listed = v
                .unchecked
                .iter()
                .any(|u| u.kind == "ref" && u.what.starts_with(&r.to_string()) && u.why == "offline: no cached answer");
            assert!(listed, "{name}: {r} is not listed as unchecked");
        }
        assert_eq!(v.unchecked.iter().filter(|u| u.kind == "ref").count(), st.refs_unchecked);
        for rule in ["ref-exists", "ref-state", "ref-labels", "ref-kind", "commit", "build-url", "build-result"] {
            assert!(v.findings_of(rule).is_empty(), "{name}: nothing offline can refute a claim: {rule}");
        }
        // No placeholder findings: the `TODO`s in these reports quote code comments.
        assert!(v.findings_of("placeholder").is_empty(), "{name}: {:?}", v.findings_of("placeholder"));
        // What could not be checked, and why, grouped.
        let summary = v.not_checked_summary();
        let has = |kind: &str, why: &str| summary.iter().any(|g| g.kind == kind && g.why.contains(why));
        assert!(has("ref", "offline: no cached answer"), "{name}: {summary:?}");
        assert!(has("file-line", "no local checkout was named"), "{name}: {summary:?}");
        assert!(has("build-url", "no build ledger was given"), "{name}: {summary:?}");
        assert!(has("commit", "its repository is not named"), "{name}: {summary:?}");
        assert_eq!(summary.iter().map(|g| g.count).sum::<usize>(), v.unchecked.len());
        eprintln!("{name}: not checked —");
        for g in &summary {
            eprintln!("  {:>3} {:<13} {}", g.count, g.kind, g.why);
        }
        assert_eq!(v.check("ref-exists").unwrap().status, CheckStatus::Incomplete);
        assert_eq!(v.check("file-line").unwrap().status, CheckStatus::Incomplete);
        // Rendered text: table checks say they do not apply rather than guess.
        assert_eq!(v.check("tier-columns").unwrap().status, CheckStatus::NotApplicable);
        assert_eq!(v.check("fix-shape").unwrap().status, CheckStatus::NotApplicable);
        assert_eq!(v.check("tldr-takeaways").unwrap().status, CheckStatus::Passed);
        assert_eq!(v.check("uncertainty").unwrap().status, CheckStatus::Passed);
        assert_ne!(v.verdict(), "pass");
        assert_eq!(v.exit_code(false), 1);
        let md = render_markdown(&v, name);
        assert!(md.contains("offline: no cached answer"));
        assert!(md.contains("| Kind | Why | Count | Examples |"));
        // The sweep over the same references marks every row as not checked.
        let rows = sweep(&client, &distinct, SweepOptions::default());
        assert!(rows.iter().all(|r| r.mark == Mark::NotChecked), "{name}");
        eprintln!(
            "{name}: {} refs ({} distinct, {} ambiguous) not checked offline; {} file:line unchecked; {} findings",
            st.refs_found,
            st.refs_distinct,
            st.refs_ambiguous,
            v.unchecked.iter().filter(|u| u.kind == "file-line").count(),
            v.findings.len()
        );
    }
}

#[test]
fn seed_failures_report_specifics() {
    let Some(reports) = seed_reports() else { return };
    let (_, _, text) = &reports[0];
    let v = verify(
        text,
        &Resolvers { refs: &offline_client(), code: &NoCode, builds: &NoBuilds },
        &VerifyOptions::default(),
    );
    let what: Vec<&str> = v.unchecked.iter().map(|u| u.what.as_str()).collect();
    for expected in [
        "kubernetes/kops#18238 (written `kops#18238`)",
        "kubernetes/kubernetes#138584 (written `k/k#138584`)",
        "kubernetes-sigs/cluster-api-provider-aws#5990 (written `CAPA#5990`)",
        "`gcp-pd-csi#2320`",
        "`#36997`",
    ] {
        assert!(what.contains(&expected), "{expected} missing from {what:?}");
    }
    let amb = v.unchecked.iter().find(|u| u.what == "`gcp-pd-csi#2320`").unwrap();
    assert!(amb.why.starts_with("ambiguous: `gcp-pd-csi` is not a known repository"));
    // The two `TODO`s are quotations of a code comment ("guarded by TODO referencing
    // k/k#113359", "with TODO // https://..."), not unfinished text.
    assert!(v.findings_of("placeholder").is_empty(), "{:?}", v.findings_of("placeholder"));
    assert!(v.check("placeholder").unwrap().note.starts_with("2 TODO/placeholder word(s) quoted"));
    // Patterns whose text names a commit, a config path with lines, or the PR that
    // exposed the failure have a causal chain.
    let lines: Vec<&str> = text.lines().collect();
    for f in v.findings_of("causal-chain") {
        let title = lines[f.line - 1];
        // Pattern G says "See V3 (KEP-4974) and V4 (compat-versions) under Pattern F":
        // it carries the chain written there.
        for named in ["Pattern B", "Pattern E", "Pattern F", "Pattern G"] {
            assert!(!title.starts_with(named), "{title}: {}", f.message);
        }
    }
    // Pattern J names only a separate fix ("#550 … fixed the make k8s invocation but not
    // the S3 ACL — separate issue"): no causal chain.
    let j = v.findings_of("causal-chain").into_iter().find(|f| lines[f.line - 1].starts_with("Pattern J")).expect("J");
    assert!(j.message.contains("only related or separate changes (ref provider-aws-test-infra#550)"), "{}", j.message);
}

#[test]
fn seed_flakes_report_hedge_without_evidence_is_flagged() {
    let Some(reports) = seed_reports() else { return };
    let (_, _, text) = &reports[1];
    let v = verify(
        text,
        &Resolvers { refs: &offline_client(), code: &NoCode, builds: &NoBuilds },
        &VerifyOptions::default(),
    );
    let lines: Vec<&str> = text.lines().collect();
    // "K.6 — AWS EBS CSI driver (7 jobs; coherent 50-70% — likely AWS account quota /
    // Boskos)." states a cause with "likely", no evidence and no uncertainty marker.
    let hedges: Vec<&str> = v.findings_of("hedge").iter().map(|f| lines[f.line - 1]).collect();
    assert_eq!(hedges.len(), 1, "{hedges:?}");
    assert!(hedges[0].starts_with("K.6 — AWS EBS CSI driver"), "{hedges:?}");
}

// ---- a clean report and planted faults -------------------------------------------------

const BASE: &str = "https://prow.k8s.io/view/gs/kubernetes-ci-logs/logs";
const LETTERS: [char; 8] = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'];

fn build_url(i: usize) -> String {
    format!("{BASE}/ci-job-{}/{}", i, 1_900_000_000_000_000_000u64 + i as u64)
}

fn clean_report() -> String {
    let mut s = String::new();
    s.push_str("# Kubernetes CI Failures — Triage Report\n\n**Date**: 2026-05-10  \n**Method**: 8 investigations, one cross-check, a PR sweep.\n\n---\n\n");
    s.push_str("## Quick navigation\n- [TL;DR](#tldr)\n- [Patterns](#1-patterns)\n\n---\n\n");
    s.push_str(
        "<a id=\"tldr\"></a>\n## TL;DR\n\n**40 of 200 (20%) jobs collapse into 8 patterns.**\n\n**Three takeaways**:\n",
    );
    s.push_str("1. The fix o/r#1 merged today and clears Pattern A.\n");
    s.push_str("2. Pattern B waits on o/r#3, which needs an approver.\n");
    s.push_str("3. `failing_days` over-states rarely-run jobs (see Methodology).\n\n---\n\n");
    s.push_str("<a id=\"1-patterns\"></a>\n## 1. The 8 Patterns\n\n");
    for (i, l) in LETTERS.iter().enumerate() {
        let p = format!("pkg/p{}/file.go", l.to_ascii_lowercase());
        s.push_str(&format!("### Pattern {l} — cluster {l} (5 jobs)\n\n"));
        s.push_str(&format!("**One-line summary**: jobs of cluster {l} time out.\n\n"));
        s.push_str(&format!(
            "**Root cause**: `{p}:10` polls for 10s; the caller at {p}:11 retries and {p}:12 gives up.\n\n"
        ));
        s.push_str(&format!("**Build**: [{}]({})\n\n", 1_900_000_000_000_000_000u64 + i as u64, build_url(i)));
        s.push_str("**Causal chain**:\n- Introduced by: a refactor of the poll loop (see history).\n- Exposed by: slower runners since 2026-04-01.\n\n");
        if i == 1 {
            s.push_str("Fix attempt o/r#2 CLOSED unmerged — needs re-do; tracker o/r#4 OPEN.\n\n");
        }
    }
    s.push_str("---\n\n## 2. Misclassifications (NOT real failures)\n\n| Entry | Reality |\n|---|---|\n| `ci-job-flaky` | by-design lane |\n\n---\n\n");
    s.push_str("## 3. Action plan\n\n### 🟢 Tier 0 — Done in this run\n\n| # | Item | Status (as of 2026-05-10) |\n|---|---|---|\n");
    s.push_str("| 0.1 | o/r#1 shortens the poll loop (Pattern A) | ✅ MERGED 2026-05-10 |\n\n");
    s.push_str("### 🟢 Tier 1 — Nudge already-written fixes\n\n| # | Action | Cleared | Block | Status |\n|---|---|---:|---|---|\n");
    s.push_str("| 1.1 | Approve o/r#3 | 5 | missing approved | 🟡 OPEN |\n\n");
    s.push_str("### 🟢 Tier 2 — Mechanical fixes (write the PR)\n\n| # | Action | Cleared | Effort | Status |\n|---|---|---:|---|---|\n");
    s.push_str(
        "| 2.1 | At pkg/pc/file.go:10 change `10*time.Second` → `30*time.Second` | 5 | 1 line | not started |\n\n",
    );
    s.push_str("### 🟡 Tier 3 — Real bugs (need investigation)\n\n| # | Action | Cleared | Owner | Status |\n|---|---|---:|---|---|\n");
    s.push_str("| 3.1 | Find why cluster H's runners are slow | 5 | sig-node | not started |\n\n");
    s.push_str("### 🟠 Tier 4 — Strategic / governance\n\n| # | Action | Why |\n|---|---|---|\n| 4.1 | Down-weight rarely-run jobs | biased metric |\n\n");
    s.push_str("### 🔵 Tier 5 — Deletion candidates\n\n| # | Job | Why |\n|---|---|---|\n| 5.1 | `ci-job-dead` | branch frozen for two years |\n\n---\n\n");
    s.push_str(
        "## 4. Methodology\n\n- Eight investigations, one cross-check of the eight highest-leverage claims.\n\n---\n\n",
    );
    s.push_str("## 5. Verifications and open questions\n\n### Q1 — Do A and B share a cause? (REFUTED)\n**Verdict**: different first failure lines in two builds each.\n\n");
    s.push_str("### Still open (not investigated to closure)\n- Why the runners slowed on 2026-04-01.\n- Whether o/r#3 also covers arm64.\n- Which image change exposed Pattern D.\n\n---\n\n");
    s.push_str("## Appendix\n\n### Source dashboard\n- Raw JSON: https://storage.googleapis.com/k8s-metrics/failures-latest.json\n");
    s
}

fn read() -> ReadInfo {
    ReadInfo {
        read_at: Some(1_778_400_000),
        answered: Answered::Live,
        api_url: "https://api.github.com/repos/o/r/issues/1".into(),
        body_sha256: "ab".into(),
    }
}

fn pr(n: u64, status: PrStatus) -> RefState {
    RefState::Pr(PrState {
        status,
        title: format!("pr {n}"),
        read: read(),
        ..PrState::unknown(IssueRef::new(RepoRef::new("o", "r"), n), "", "u")
    })
}

fn resolver() -> StaticResolver {
    let issue = IssueRef::new(RepoRef::new("o", "r"), 4);
    StaticResolver::new("not in the test table")
        .with(pr(1, PrStatus::Merged { at: "2026-05-10T11:23:45Z".into() }))
        .with(pr(2, PrStatus::ClosedUnmerged { closed_at: Some("2026-03-18T00:00:00Z".into()) }))
        .with(pr(
            3,
            PrStatus::Open { draft: false, mergeable: Some(true), blocking_labels: vec!["missing approved".into()] },
        ))
        .with(RefState::Issue(IssueState {
            reference: issue.clone(),
            is_pr: false,
            status: IssueStatus::Open,
            title: "tracker".into(),
            labels: vec![],
            url: issue.html_url(),
            pr_merged_at: None,
            pr_draft: None,
            created_at: None,
            updated_at: None,
            read: read(),
        }))
        .with(pr(5, PrStatus::Merged { at: "2026-05-09T00:00:00Z".into() }))
        .with(RefState::NotFound { reference: IssueRef::new(RepoRef::new("o", "r"), 404), read: read() })
}

struct World {
    _dir: tempfile::TempDir,
    checkouts: Checkouts,
    builds: KnownBuilds,
    refs: StaticResolver,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    for l in LETTERS {
        let p = dir.path().join(format!("pkg/p{}/file.go", l.to_ascii_lowercase()));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(
            &p,
            (1..=50)
                .map(|n| if n == 10 { "\ttimeout := 10*time.Second\n".to_string() } else { format!("line {n}\n") })
                .collect::<String>(),
        )
        .unwrap();
    }
    let mut checkouts = Checkouts::new();
    checkouts.add(Checkout::open("kubernetes", dir.path(), None).unwrap(), "kubernetes/kubernetes", &[]);
    let urls: Vec<String> = (0..LETTERS.len()).map(build_url).collect();
    let builds = KnownBuilds::from_urls(urls.iter().map(String::as_str));
    World { _dir: dir, checkouts, builds, refs: resolver() }
}

fn run(w: &World, text: &str, opts: &VerifyOptions) -> Verification {
    verify(text, &Resolvers { refs: &w.refs, code: &w.checkouts, builds: &w.builds }, opts)
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).map(|i| i + 1).unwrap_or_else(|| panic!("{needle:?} not in text"))
}

#[test]
fn clean_report_has_zero_findings() {
    let w = world();
    let text = clean_report();
    let v = run(&w, &text, &VerifyOptions::default());
    assert!(v.findings.is_empty(), "{}", render_markdown(&v, "clean"));
    assert!(v.unchecked.is_empty(), "{:?}", v.unchecked);
    assert_eq!(v.verdict(), "pass");
    assert_eq!(v.exit_code(false), 0);
    let st = &v.stats;
    assert_eq!((st.patterns, st.refs_distinct, st.refs_checked), (8, 4, 4));
    assert_eq!((st.file_lines_found, st.file_lines_distinct, st.file_lines_resolved), (25, 24, 24));
    assert_eq!((st.build_urls_found, st.build_urls_distinct, st.build_urls_known), (8, 8, 8));
    assert!(v.checks.iter().all(|c| matches!(c.status, CheckStatus::Passed | CheckStatus::NotApplicable)));
    let js = render_json(&v, "clean.md", false);
    assert_eq!(js["verdict"], "pass");
    assert_eq!(js["exit_code"], 0);
    assert_eq!(js["rules"].as_array().unwrap().len(), citriage_verify::RULES.len());
    // Deterministic.
    assert_eq!(render_markdown(&v, "clean"), render_markdown(&run(&w, &text, &VerifyOptions::default()), "clean"));
}

/// Applies a fault and checks the findings are exactly the expected (rule, line) pairs.
fn planted(w: &World, text: &str, opts: &VerifyOptions, expected: &[(&str, usize)]) -> Verification {
    let v = run(w, text, opts);
    let got: Vec<(String, usize)> = v.findings.iter().map(|f| (f.rule_id.clone(), f.line)).collect();
    let mut want: Vec<(String, usize)> = expected.iter().map(|(r, l)| (r.to_string(), *l)).collect();
    want.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
    let mut got_sorted = got.clone();
    got_sorted.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
    assert_eq!(got_sorted, want, "{}", render_markdown(&v, "planted"));
    assert_eq!(v.exit_code(false), if expected.is_empty() { 0 } else { 1 });
    v
}

#[test]
fn planted_closed_pr_called_merged() {
    let w = world();
    let text = clean_report().replace(
        "| 0.1 | o/r#1 shortens the poll loop (Pattern A) | ✅ MERGED 2026-05-10 |\n",
        "| 0.1 | o/r#1 shortens the poll loop (Pattern A) | ✅ MERGED 2026-05-10 |\n| 0.2 | o/r#2 retries the flaky call | ✅ MERGED 2026-05-09 |\n| 0.3 | o/r#3 approved fix | ✅ MERGED 2026-05-09 |\n",
    );
    let v = planted(
        &w,
        &text,
        &VerifyOptions::default(),
        &[("ref-state", line_of(&text, "| 0.2 |")), ("ref-state", line_of(&text, "| 0.3 |"))],
    );
    let f = &v.findings_of("ref-state")[0];
    assert!(
        f.message.contains("o/r#2 is called merged") && f.message.contains("CLOSED without merging 2026-03-18"),
        "{}",
        f.message
    );
    assert_eq!(f.evidence.len(), 1, "the PR state is the evidence");
    assert!(f.rule.contains("rule 5"));
    assert_eq!(f.severity, citriage_verify::Severity::Error);
    assert!(v.findings_of("ref-state")[1].message.contains("PR OPEN"));
}

#[test]
fn planted_missing_file_line() {
    let w = world();
    let text = clean_report()
        .replace("the caller at pkg/pc/file.go:11", "the caller at pkg/pc/gone.go:11")
        .replace("`pkg/pd/file.go:10` polls", "`pkg/pd/file.go:999` polls");
    let v = planted(
        &w,
        &text,
        &VerifyOptions::default(),
        &[("file-line", line_of(&text, "pkg/pc/gone.go:11")), ("file-line", line_of(&text, "pkg/pd/file.go:999"))],
    );
    let msgs: Vec<&str> = v.findings.iter().map(|f| f.message.as_str()).collect();
    assert!(msgs.iter().any(|m| m.contains("no file pkg/pc/gone.go in kubernetes")), "{msgs:?}");
    assert!(msgs.iter().any(|m| m.contains("has 50 lines; line 999 is past its end")), "{msgs:?}");
}

#[test]
fn planted_fabricated_build_url() {
    let w = world();
    let fake = format!("{BASE}/ci-job-4/1999999999999999999");
    let text = clean_report().replace(&build_url(4), &fake);
    let v = planted(&w, &text, &VerifyOptions::default(), &[("build-url", line_of(&text, "1999999999999999999"))]);
    assert!(v.findings[0].message.contains("build 1999999999999999999 of ci-job-4 is not in the ledger"));
}

#[test]
fn planted_four_takeaways() {
    let w = world();
    let text = clean_report()
        .replace("(see Methodology).\n", "(see Methodology).\n4. A fourth point that should have been cut.\n");
    let v = planted(&w, &text, &VerifyOptions::default(), &[("tldr-takeaways", line_of(&text, "4. A fourth point"))]);
    assert!(v.findings[0].message.contains("lists 4 takeaways"));
}

#[test]
fn planted_todo() {
    let w = world();
    let text = clean_report()
        .replace("**One-line summary**: jobs of cluster F time out.", "**One-line summary**: TODO confirm the owner.");
    planted(&w, &text, &VerifyOptions::default(), &[("placeholder", line_of(&text, "TODO confirm"))]);
    // Quoted code is not a placeholder; a template slot is.
    let quoted = clean_report().replace(
        "**One-line summary**: jobs of cluster F time out.",
        "**One-line summary**: the test's `// TODO: skip on Windows` was removed.",
    );
    planted(&w, &quoted, &VerifyOptions::default(), &[]);
    let slot = clean_report().replace("**Date**: 2026-05-10", "**Date**: {DATE}");
    planted(&w, &slot, &VerifyOptions::default(), &[("placeholder", 3)]);
}

#[test]
fn planted_lessons_without_prior() {
    let w = world();
    let lessons = "## 6. Lessons (what first-pass got wrong)\n\n1. The first pass blamed the network.\n2. It said \"Pattern B is a DNS outage\" but the builds show a timeout.\n\n---\n\n## Appendix";
    let text = clean_report().replace("## Appendix", lessons);
    planted(&w, &text, &VerifyOptions::default(), &[("lessons", line_of(&text, "## 6. Lessons"))]);
    // With a prior report the section is allowed, but each lesson must quote it.
    let with_prior = VerifyOptions { prior_report: true, ..Default::default() };
    planted(&w, &text, &with_prior, &[("lessons", line_of(&text, "blamed the network"))]);
}

#[test]
fn planted_other_faults() {
    let w = world();
    let base = clean_report();
    // A reference that does not exist.
    let t = base.replace("tracker o/r#4 OPEN.", "tracker o/r#4 OPEN, see also o/r#404.");
    let v = planted(&w, &t, &VerifyOptions::default(), &[("ref-exists", line_of(&t, "o/r#404"))]);
    assert!(v.findings[0].message.contains("o/r#404 does not exist"));
    // The TL;DR calls something shipped that Tier 0 does not list.
    let t = base
        .replace("2. Pattern B waits on o/r#3, which needs an approver.", "2. Pattern B's fix o/r#5 merged yesterday.");
    planted(&w, &t, &VerifyOptions::default(), &[("tldr-tier0", line_of(&t, "o/r#5 merged"))]);
    // A Tier 2 row with no concrete change, and a Tier 3 row with a missing cell.
    let t = base
        .replace(
            "| 5 | 1 line | not started |\n",
            "| 5 | 1 line | not started |\n| 2.2 | Fix the configuration | 2 | small | not started |\n",
        )
        .replace(
            "| 3.1 | Find why cluster H's runners are slow | 5 | sig-node | not started |",
            "| 3.1 | Find why cluster H's runners are slow | 5 | not started |",
        );
    planted(
        &w,
        &t,
        &VerifyOptions::default(),
        &[("fix-shape", line_of(&t, "| 2.2 |")), ("tier-columns", line_of(&t, "| 3.1 |"))],
    );
    // Too few uncertainty items; a missing Tier 4; a pattern without a build URL.
    let t = base.replace("- Which image change exposed Pattern D.\n", "");
    planted(&w, &t, &VerifyOptions::default(), &[("uncertainty", line_of(&t, "### Still open"))]);
    let t = base.replace("### 🟠 Tier 4 — Strategic / governance", "### Strategic notes");
    planted(&w, &t, &VerifyOptions::default(), &[("tier-sections", line_of(&t, "## 3. Action plan"))]);
    let t = base.replace(&format!("**Build**: [{}]({})\n\n", 1_900_000_000_000_000_007u64, build_url(7)), "");
    planted(&w, &t, &VerifyOptions::default(), &[("pattern-depth", line_of(&t, "### Pattern H"))]);
}

#[test]
fn offline_unknown_refs_are_not_passed_in_a_clean_report() {
    let w = world();
    let text = clean_report();
    let client = offline_client();
    let v =
        verify(&text, &Resolvers { refs: &client, code: &w.checkouts, builds: &w.builds }, &VerifyOptions::default());
    assert!(v.findings.is_empty());
    assert_eq!(v.unchecked.len(), 4);
    assert_eq!(v.verdict(), "incomplete");
    assert_eq!(v.exit_code(false), 1, "unverified is not verified");
    assert_eq!(v.exit_code(true), 0);
}

// ---- reports in citriage's own shape ------------------------------------------------------

/// A report laid out the way `citriage-report` writes a snapshot-only triage: anchors,
/// evidence links, job tables, "not determinable from the snapshot" root causes.
fn citriage_shaped_report() -> String {
    let mut s = String::new();
    s.push_str("# Kubernetes CI Failures — Triage Report\n\n**Date**: 2026-11-21 (the snapshot's date)  \n");
    s.push_str("**Source**: [`failures-latest.json`](https://storage.googleapis.com/k8s-metrics/failures-latest.json). Snapshot: 270 jobs, read from `examples/k8s/failures-2026-11-21.json` (sha256 `917cc2f1c0aa1c7c`).  \n");
    s.push_str("**Method**: citriage snapshot triage — 55 ordered categorization rules (built-in rules), cluster scoring and selection per the runbook's Appendix A, drift against the 2026-11-20 snapshot in the store, and misclassification checks (snapshot-only: no builds were ingested). Every job-level claim cites the snapshot entry or build it rests on (evidence ids link to the [Evidence](#evidence) appendix). Build logs and PR/issue state were not read in this run.\n\n");
    s.push_str("---\n\n## Quick navigation\n- [Status — what's been done in this run](#status)\n- [TL;DR](#tldr)\n- [The 8 patterns](#1-patterns)\n\n---\n\n");
    s.push_str("<a id=\"status\"></a>\n## Status — what's been done in this run\n\n### Created in this run\n| Artifact | Description | Status (as of the snapshot date) |\n|---|---|---|\n| `report.md`, `report.json` | this report and its JSON twin | written |\n\n");
    s.push_str("### Open external nudge-targets\nNone listed: pull-request and issue state was not read in this run, so no PR can be named with a verified state.\n\n---\n\n");
    s.push_str("<a id=\"tldr\"></a>\n## TL;DR\n\n**170 of 270 (63%) jobs fall into the 8 clusters selected for investigation**, out of 42 categories.\n\n**Three takeaways**:\n");
    s.push_str("1. The largest category is `kops-grid-gce-new` with 65 of 270 jobs (24%), 0 of them critical; 160 failing days at worst.\n");
    s.push_str("2. 26 listed job(s) are not real failures: Brand-new lane (no baseline), By-design lane. Discount them before counting regressions.\n");
    s.push_str("3. Since 2026-11-20 (1 day(s)): 20 added, 3 removed, 1 reappeared; 248 of 250 common jobs grew by exactly 1 day(s).\n\n---\n\n");
    s.push_str("<a id=\"1-patterns\"></a>\n## 1. The 8 Patterns\n\n");
    for (i, l) in LETTERS.iter().enumerate() {
        s.push_str(&format!("### Pattern {l} — category-{i} ({} jobs)\n\n**One-line summary**: {} jobs in `category-{i}`: 2 critical.\n\n", i + 2, i + 2));
        s.push_str("**Root cause**: not determinable from the snapshot, which carries only job names and figures. It needs each job's sampled builds (first failure line, JUnit failures) — `citriage fetch` ingests them.\n\n");
        s.push_str("**Causal chain**:\n- Introduced by: unknown — see the uncertainty section\n- Exposed by: unknown — see the uncertainty section\n\n");
        s.push_str(
            "**Affected jobs** (most severe first):\n\n| Job | Days | Severity | Evidence |\n|---|---:|---|---|\n",
        );
        s.push_str(&format!("| `ci-job-{i}` | 400 | critical | [ev-0000000000{i:02}](#ev-0000000000{i:02}) |\n\n"));
        s.push_str("**Fix shape (overall)**: needs investigation — see Tier 3.\n\n**Owner**: not derivable from the snapshot (needs the job config's `testgrid-alert-email` or the tests' `[sig-x]` tags).\n\n");
    }
    s.push_str("---\n\n<a id=\"2-misclassifications\"></a>\n## 2. Misclassifications (NOT real failures)\n\nNone found by the snapshot-only checks (harness names in `test_flakes`, consistency paradox, brand-new lane families, by-design lanes and tests).\n\n---\n\n");
    s.push_str("<a id=\"3-action-plan\"></a>\n## 3. Action plan\n\n### 🟢 Tier 0 — Done in this run\n\n| # | Item | Status (as of the snapshot date) |\n|---|---|---|\n| 0.1 | No fix is known to have merged: PR state was not read in this run | not checked |\n\n");
    s.push_str("### 🟢 Tier 1 — Nudge already-written fixes (highest leverage)\n\n| # | Action | Cleared | Block | Status (as of the snapshot date) |\n|---|---|---:|---|---|\n| 1.1 | None listed: no PR was looked up, so none can be named with a verified state | 0 | — | not checked |\n\n");
    s.push_str("### 🟢 Tier 2 — Mechanical fixes (write the PR)\n\n| # | Action | Cleared | Effort | Status (as of the snapshot date) |\n|---|---|---:|---|---|\n| 2.1 | Exclude harness steps from `test_flakes` in the flakes dashboard query: add 'Up' to its exclusion list `NOT IN ('Test', 'DiffResources')` | 3 | 1 line | not started |\n\n");
    s.push_str("### 🟡 Tier 3 — Real bugs (need investigation)\n\n| # | Action | Cleared | Owner | Status (as of the snapshot date) |\n|---|---|---:|---|---|\n| 3.1 | Investigate Pattern A (`category-0`): sample 2-3 builds | 2 | unknown | not started |\n\n");
    s.push_str("### 🟠 Tier 4 — Strategic / governance\n\n| # | Action | Why |\n|---|---|---|\n| 4.1 | Report failing streaks in builds | `failing_days` over-states jobs that run rarely |\n\n");
    s.push_str("### 🔵 Tier 5 — Deletion candidates\n\n| # | Job | Days | Why | Evidence |\n|---|---|---:|---|---|\n| 5.1 | `ci-job-0` | 400 | failing for a year or more: review for deletion | [ev-000000000000](#ev-000000000000) |\n\n---\n\n");
    s.push_str("<a id=\"4-methodology\"></a>\n## 4. Methodology\n\n- Investigation, cross-check and PR/issue verification: not run (snapshot-only triage).\n\n---\n\n");
    s.push_str("<a id=\"5-verifications\"></a>\n## 5. Verifications and open questions\n\n### Q1 — Every listed job is assigned to exactly one category (CONFIRMED)\n**Verdict**: 270 jobs in the snapshot, 270 across the categories.\n\n");
    s.push_str("### Still open (not investigated to closure)\n- state=error cascades: are jobs failing before a pod exists (invisible in GCS)? (needs Prow's prowjob list (`prowjobs.js`))\n- Root causes and sub-patterns of every selected pattern: need sampled build logs and JUnit.\n- Introducing and exposing changes: need PR/commit history (GitHub state, `git log -S`).\n\n---\n\n");
    s.push_str("<a id=\"appendix\"></a>\n## Appendix\n\n<a id=\"evidence\"></a>\n### Evidence\n\n| Id | Kind | Locator | Excerpt |\n|---|---|---|---|\n| <a id=\"ev-000000000000\"></a>ev-000000000000 | snapshot entry | `examples/k8s/failures-2026-11-21.json#/ci-job-0` | `failing_days=400` |\n");
    s
}

#[test]
fn citriage_shaped_report_is_clean_and_depth_does_not_apply() {
    let text = citriage_shaped_report();
    let res = StaticResolver::new("no references expected");
    let v = verify(&text, &Resolvers { refs: &res, code: &NoCode, builds: &NoBuilds }, &VerifyOptions::default());
    assert!(v.findings.is_empty(), "{}", render_markdown(&v, "citriage"));
    assert!(v.unchecked.is_empty(), "{:?}", v.unchecked);
    let depth = v.check("pattern-depth").unwrap();
    assert_eq!(depth.status, CheckStatus::NotApplicable);
    assert!(depth.note.starts_with("no build evidence"), "{}", depth.note);
    assert_eq!(v.check("pattern-count").unwrap().status, CheckStatus::Passed);
    assert_eq!(v.exit_code(false), 0);
    // Without the snapshot-only declaration, the same patterns fail the depth rule:
    // citing no build is only acceptable when the report says it read none.
    let undeclared = text
        .replace(" (snapshot-only: no builds were ingested)", "")
        .replace(" Build logs and PR/issue state were not read in this run.", "")
        .replace("not run (snapshot-only triage)", "not run");
    let v2 =
        verify(&undeclared, &Resolvers { refs: &res, code: &NoCode, builds: &NoBuilds }, &VerifyOptions::default());
    assert_eq!(v2.findings_of("pattern-depth").len(), 8);
    assert!(v2.findings.iter().all(|f| f.rule_id == "pattern-depth"));
}

#[test]
fn demo_reports_when_present() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../demo-report");
    let mut seen = 0;
    for ds in ["failures", "flakes"] {
        let p = root.join(ds).join("report.md");
        let Ok(text) = std::fs::read_to_string(&p) else {
            eprintln!("skipping {}: not generated (run `cargo run -- demo`)", p.display());
            continue;
        };
        seen += 1;
        let res = StaticResolver::new("no references expected");
        let v = verify(&text, &Resolvers { refs: &res, code: &NoCode, builds: &NoBuilds }, &VerifyOptions::default());
        assert!(v.findings.is_empty(), "{}", render_markdown(&v, ds));
        assert_eq!(v.check("pattern-depth").unwrap().status, CheckStatus::NotApplicable);
    }
    eprintln!("demo reports verified: {seen}");
}

#[test]
fn cached_github_answers_catch_a_closed_pr_called_merged() {
    let w = world();
    let cache = Arc::new(MemoryCache::new());
    let put = |n: u64, body: serde_json::Value| {
        cache.put(
            &format!("https://api.github.com/repos/o/r/issues/{n}"),
            CachedResponse {
                status: 200,
                etag: Some(format!("\"etag-{n}\"")),
                body: body.to_string().into_bytes(),
                next: None,
                fetched_at: 1_778_400_000,
            },
        )
    };
    put(
        1,
        serde_json::json!({"number":1,"state":"closed","title":"fix","labels":[],"pull_request":{"merged_at":"2026-05-10T11:23:45Z"}}),
    );
    put(
        2,
        serde_json::json!({"number":2,"state":"closed","title":"attempt","labels":[],"closed_at":"2026-03-18T00:00:00Z","pull_request":{"merged_at":null}}),
    );
    let client = GithubClient::new(ClientConfig { offline: true, ..Default::default() }, Box::new(cache.clone()))
        .with_clock(|| 1_778_400_000 + 86_400);
    let text = clean_report().replace(
        "| 0.1 | o/r#1 shortens the poll loop (Pattern A) | ✅ MERGED 2026-05-10 |\n",
        "| 0.1 | o/r#1 shortens the poll loop (Pattern A) | ✅ MERGED 2026-05-10 |\n| 0.2 | o/r#2 retries the flaky call | ✅ MERGED 2026-05-09 |\n",
    );
    let v =
        verify(&text, &Resolvers { refs: &client, code: &w.checkouts, builds: &w.builds }, &VerifyOptions::default());
    let got: Vec<(&str, usize)> = v.findings.iter().map(|f| (f.rule_id.as_str(), f.line)).collect();
    assert_eq!(got, vec![("ref-state", line_of(&text, "| 0.2 |"))]);
    let ev = &v.findings[0].evidence[0];
    assert_eq!(ev.locator, "github:/repos/o/r/issues/2");
    assert_eq!(ev.as_of, "2026-05-10");
    // #3 and #4 were never cached: listed as not checked, not passed.
    let what: Vec<&str> = v.unchecked.iter().map(|u| u.what.as_str()).collect();
    assert_eq!(what, vec!["o/r#3", "o/r#4"]);
    assert!(v.unchecked.iter().all(|u| u.why == "offline: no cached answer"));
}

#[test]
fn hostile_lines_are_read_without_panics_and_very_long_ones_are_listed_not_read() {
    let long: String = (0..6000).map(|i| format!("k/k#{} MERGED, ", 100 + i)).collect();
    let odd = "`unclosed code ``x`` \"half quote ~~strike {{{ {a,b} ${X} (( [[ ]] )) ✅ #12 merged? \u{200d}\u{fe0f} é́";
    let text = format!("# Triage Report\n\n**Date**: 2026-05-10\n\n## TL;DR\n\n1. {odd}\n2. {long}\n");
    let res = StaticResolver::new("not in the test table");
    let v = verify(&text, &Resolvers { refs: &res, code: &NoCode, builds: &NoBuilds }, &VerifyOptions::default());
    assert!(
        v.unchecked
            .iter()
            .any(|u| u.kind == "claim" && u.line == 8 && u.why.contains("its state claims were not read")),
        "{:?}",
        v.unchecked.iter().filter(|u| u.kind == "claim").collect::<Vec<_>>()
    );
    // The odd line is tokenized: its `{a,b}` and `${X}` are code-like, `{{{` is not a slot.
    assert!(v.findings_of("placeholder").iter().all(|f| f.line != 7), "{:?}", v.findings_of("placeholder"));
}
