//! Investigation briefs: for each selected cluster, a brief for the runbook's Phase 3
//! step filled with what citriage has already verified — the cluster's jobs, their
//! configs, sampled builds, log excerpts and PR/issue states, each with its evidence
//! id — so the investigator (a person or an LLM) continues from checked facts instead
//! of starting over;
//! and a cross-check brief (Phase 4) listing the highest-leverage claims for an
//! independent verifier. Pure: plain input structs in, Markdown out, deterministic.

use citriage_model::escape::{md_cell as cell, md_code, md_fence as fence, terminal};
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// A job of the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BriefJob {
    pub name: String,
    /// The dashboard figure as shown (`failing_days 160`, `consistency 0.615`).
    pub figure: String,
    pub severity: String,
    /// Where its Prow config was found (`config/jobs/x.yaml:243`), if it was.
    pub config: Option<String>,
    /// `testgrid-alert-email`, if the config has one.
    pub alert_email: Option<String>,
    pub evidence_ids: Vec<String>,
}

/// A build already sampled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampledBuild {
    pub job: String,
    pub build_id: String,
    pub url: String,
    /// `FAILURE`, `SUCCESS`, `ERROR`, ...
    pub result: String,
    /// Start day or time as stored.
    pub started: String,
    pub evidence_id: Option<String>,
}

/// A verified excerpt (first failure line, JUnit failure, config snippet).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BriefExcerpt {
    pub evidence_id: String,
    pub locator: String,
    pub text: String,
}

/// A PR or issue whose state was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KnownRef {
    /// `owner/repo#N`.
    pub reference: String,
    /// `MERGED 2026-05-10T13:07:47Z`, `OPEN, blocked: needs-rebase`, ...
    pub state: String,
    /// When it was read (UTC text).
    pub read_at: String,
}

/// Everything the investigation brief of one cluster is filled with.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterBrief {
    /// Pattern letter or id (`A`).
    pub id: String,
    pub name: String,
    /// `failures` or `flakes`.
    pub dataset: String,
    pub snapshot_date: String,
    /// Most severe first (the caller's order is kept).
    pub jobs: Vec<BriefJob>,
    pub builds: Vec<SampledBuild>,
    pub excerpts: Vec<BriefExcerpt>,
    pub refs: Vec<KnownRef>,
    /// Local checkouts the investigator may read: (name, repository).
    pub checkouts: Vec<(String, String)>,
    /// The prior report's name, when there is one.
    pub prior_report: Option<String>,
    /// Why the cluster was selected (score, always-include rule).
    pub why_selected: String,
    /// Where the failures started: each job's regression window and, when checkouts
    /// were read, its ranked commits (one line each, from `suspects`).
    pub windows: Vec<String>,
}

const GROUND_RULES: &[&str] = &[
    "Name a PR or issue only after reading its state in this investigation (or take it from the verified list above); otherwise write \"no fix PR found\".",
    "Back every statement about code with `path:line` that you opened or grepped now; drop the statement if you cannot.",
    "Back every failure signature with the URL of a build log or artifact you actually fetched.",
    "Claim that jobs share a cause only after seeing the same signature in sampled builds of at least two of them.",
    "Keep MERGED and CLOSED-without-merge apart: a closed, unmerged PR is an attempt that did not land and needs a re-do.",
    "Keep Prow `state=error` (the pod never started, nothing reached GCS) apart from a failing test run.",
    "For each tracking issue, walk its timeline for cross-referenced PRs before saying none exists.",
    "Stale or rotten issue labels say nothing about whether the bug is still live: check the job's current builds.",
    "End with what you could not verify and why; it goes into the report's uncertainty section as is.",
    "Every fix you recommend carries either an existing PR with its state or a diff sketch of 1-8 lines with path and line.",
    "For each sub-pattern, name the change that introduced the bug and the change that exposed it (`git log -S`, PR history), or say which half is unknown.",
    "More than about ten jobs, or more than one signature, means 3-5 sub-patterns, each with its own cause, `path:line` and fix.",
];

/// The Phase 3 investigation brief of one cluster.
pub fn investigation_brief(c: &ClusterBrief) -> String {
    let mut s = String::new();
    let title = if c.id.is_empty() { cell(&c.name) } else { format!("{} — {}", cell(&c.id), cell(&c.name)) };
    let _ = writeln!(s, "# Investigation brief: cluster {title}\n");
    let _ = writeln!(
        s,
        "Dataset: {} dashboard, snapshot of {}. {} job(s){}.\n",
        c.dataset,
        c.snapshot_date,
        c.jobs.len(),
        if c.why_selected.is_empty() { String::new() } else { format!("; selected because {}", c.why_selected) }
    );
    s.push_str("Your task: find out why these jobs fail, split them by failure signature, and propose fixes that a maintainer can act on. Work read-only: do not edit files, open PRs or issues, push, or comment anywhere.\n\n");
    s.push_str("## Already verified (start here)\n\nEverything in this section was read by citriage and carries an evidence id; cite the id when you rely on it. Anything not listed here is unverified.\n\n");
    s.push_str(
        "### Jobs\n\n| Job | Figure | Severity | Config | Alert email | Evidence |\n|---|---|---|---|---|---|\n",
    );
    for j in &c.jobs {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} |",
            md_code(&j.name),
            cell(&j.figure),
            cell(&j.severity),
            j.config.as_deref().map(md_code).unwrap_or_else(|| "not located yet".into()),
            j.alert_email.as_deref().map(cell).unwrap_or_else(|| if j.config.is_some() {
                "none set".into()
            } else {
                "—".into()
            }),
            if j.evidence_ids.is_empty() { "—".into() } else { j.evidence_ids.join(" ") }
        );
    }
    let mut builds = c.builds.clone();
    builds.sort_by(|a, b| a.job.cmp(&b.job).then(b.build_id.cmp(&a.build_id)));
    s.push_str("\n### Sampled builds\n\n");
    if builds.is_empty() {
        s.push_str("None yet: sample 2-3 recent builds per job (newest first), including at least one passing build if the job ever passes.\n");
    } else {
        s.push_str("| Job | Build | Result | Started | Evidence |\n|---|---|---|---|---|\n");
        for b in &builds {
            let _ = writeln!(
                s,
                "| {} | [{}]({}) | {} | {} | {} |",
                md_code(&b.job),
                cell(&b.build_id),
                cell(&b.url.replace(' ', "%20").replace('(', "%28").replace(')', "%29")),
                cell(&b.result),
                cell(&b.started),
                b.evidence_id.as_deref().unwrap_or("—")
            );
        }
        let thin: Vec<&str> = c
            .jobs
            .iter()
            .filter(|j| builds.iter().filter(|b| b.job == j.name).count() < 2)
            .map(|j| j.name.as_str())
            .collect();
        if !thin.is_empty() {
            let _ = writeln!(
                s,
                "\nFewer than two sampled builds for: {}. Sample more before generalising.",
                thin.iter().map(|j| md_code(j)).collect::<Vec<_>>().join(", ")
            );
        }
    }
    if !c.windows.is_empty() {
        s.push_str("\n### Regression windows and suspect commits\n\nFrom the stored builds (`citriage suspects JOB`): start the bisection here instead of searching history.\n\n");
        for w in &c.windows {
            let _ = writeln!(s, "- {}", cell(w));
        }
    }
    s.push_str("\n### Excerpts\n\n");
    if c.excerpts.is_empty() {
        s.push_str("None yet.\n");
    }
    let mut excerpts = c.excerpts.clone();
    excerpts.sort_by(|a, b| a.evidence_id.cmp(&b.evidence_id));
    for e in &excerpts {
        // Log text keeps its lines inside a fence longer than any run of backticks in
        // it; its control characters are shown escaped.
        let text = terminal(e.text.trim_end());
        let f = fence(&text);
        let _ = writeln!(s, "- **{}** from {}:\n\n{f}\n{}\n{f}\n", cell(&e.evidence_id), md_code(&e.locator), text);
    }
    s.push_str("\n### PR and issue states\n\n");
    if c.refs.is_empty() {
        s.push_str("None read yet.\n");
    } else {
        let mut refs = c.refs.clone();
        refs.sort_by(|a, b| a.reference.cmp(&b.reference));
        s.push_str("| Reference | State | Read at |\n|---|---|---|\n");
        for r in &refs {
            let _ = writeln!(s, "| {} | {} | {} |", cell(&r.reference), cell(&r.state), cell(&r.read_at));
        }
    }
    if !c.checkouts.is_empty() {
        s.push_str("\n### Local checkouts you may read\n\n");
        let mut co = c.checkouts.clone();
        co.sort();
        for (name, repo) in &co {
            let _ = writeln!(s, "- `{name}`: {repo}");
        }
    }
    s.push_str("\n## Ground rules\n\n");
    for (i, r) in GROUND_RULES.iter().enumerate() {
        let _ = writeln!(s, "{}. {r}", i + 1);
    }
    if let Some(p) = &c.prior_report {
        let _ = writeln!(s, "{}. A prior report exists ({p}). Where it covers these jobs, carry its explanation forward, or refute it with new evidence, or state that today's finding matches it. Do not switch explanations silently.", GROUND_RULES.len() + 1);
    }
    s.push_str("\n## Steps\n\n");
    let mut steps: Vec<String> = Vec::new();
    if c.prior_report.is_some() {
        steps.push("Read the prior report's section on these jobs; note its cause, fix PRs and open questions.".into());
    }
    let located = c.jobs.iter().filter(|j| j.config.is_some()).count();
    steps.push(format!(
        "Prow config: {located} of {} job(s) located (above). Locate the rest; note cluster, decoration, `extra_refs`, testgrid annotations and whether anyone is alerted.",
        c.jobs.len()
    ));
    steps.push("Builds: for each job, read the build log of the sampled builds (and prowjob state when there is no log); find the first failure or panic and cite its line with the build URL.".into());
    steps.push(
        "Tests: read the JUnit results of failing builds; for the failing test, open the source and cite `path:line`."
            .into(),
    );
    steps.push("GitHub: search open issues and PRs for the test or error text; walk each tracking issue's timeline for cross-referenced fix PRs; read each PR's state (merged, open and what blocks it, closed unmerged).".into());
    steps.push(
        "Owners: read the OWNERS files near the config and the test source; note approvers and SIG labels.".into(),
    );
    steps.push("History: `git log --since` on the paths involved and `git log -S` on the key symbol or string to find the introducing change; find what exposed it (version bump, image, feature gate, new lane).".into());
    if c.jobs.len() > 10 {
        steps.push(format!(
            "Split: {} jobs is too many for one explanation. Group them into 3-5 sub-patterns by signature.",
            c.jobs.len()
        ));
    } else {
        steps.push("Split: if the sampled signatures differ, group the jobs into sub-patterns by signature.".into());
    }
    steps.push("Fix: for each sub-pattern, give an existing PR with its state or a 1-8 line diff sketch with path and line, and a tier (1 nudge an existing PR, 2 write a mechanical fix, 3 needs investigation, 4 governance, 5 delete or leave alone).".into());
    for (i, st) in steps.iter().enumerate() {
        let _ = writeln!(s, "{}. {st}", i + 1);
    }
    s.push_str("\n## Deliverable\n\n");
    s.push_str("1. Summary: jobs, impact, shared signature (if any), number of sub-patterns.\n");
    if c.prior_report.is_some() {
        s.push_str("2. Comparison with the prior report.\n");
    }
    s.push_str("- A table: sub-pattern, jobs, cause in one line, fix (PR or diff), owner.\n");
    s.push_str("- Per sub-pattern: the introducing and exposing changes, `path:line` citations, the build URL showing the signature.\n");
    s.push_str("- Tracking issues and fix PRs with their states; closed-unmerged PRs in their own rows marked \"needs re-do\".\n");
    s.push_str("- Recommended actions by tier; owners from OWNERS and alert emails.\n");
    s.push_str("- What you could not verify, and why.\n");
    s
}

/// What kind of claim a cross-check item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimKind {
    /// "These jobs share one root cause".
    SharedCause,
    /// "PR X is mergeable / blocked on Y / merged".
    FixState,
    /// "`path:line` is the bug".
    CodeLocation,
    /// "This is by design / not a real failure".
    NotReal,
    /// "Job X recovered / dropped out".
    Recovery,
    /// A cause different from the prior report's.
    PriorDivergence,
    Other,
}

/// One claim a cross-check may examine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckClaim {
    /// Stable id (`A.2-cause`).
    pub id: String,
    pub pattern: String,
    pub kind: ClaimKind,
    pub text: String,
    /// Jobs whose action depends on the claim.
    pub jobs_affected: usize,
    /// The tier of the action the claim supports.
    pub tier: Option<u8>,
    pub evidence_ids: Vec<String>,
    /// URLs, `path:line`, `owner/repo#N` the claim rests on.
    pub sources: Vec<String>,
}

/// Input of the cross-check brief.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrossCheckBrief {
    pub dataset: String,
    pub snapshot_date: String,
    pub clusters: usize,
    pub claims: Vec<CheckClaim>,
    /// How many claims to select (the runbook asks for 6-10).
    pub top_n: usize,
    pub prior_report: Option<String>,
}

/// Leverage of a claim: whether its action is next (Tier 1/2 first), then how many
/// jobs depend on it. Divergences from a prior report are always selected.
pub fn leverage(c: &CheckClaim) -> u64 {
    let tier = match c.tier {
        Some(1) => 5,
        Some(2) => 4,
        Some(0) => 3,
        Some(3) => 2,
        Some(_) => 1,
        None => 0,
    };
    let kind = match c.kind {
        ClaimKind::PriorDivergence => 9,
        ClaimKind::FixState | ClaimKind::SharedCause => 2,
        ClaimKind::NotReal | ClaimKind::Recovery | ClaimKind::CodeLocation => 1,
        ClaimKind::Other => 0,
    };
    (kind as u64) * 1_000_000 + (tier as u64) * 10_000 + c.jobs_affected.min(9_999) as u64
}

/// The claims to cross-check, highest leverage first (ties by id), at most `top_n`
/// (default 8), always including every prior-divergence claim.
pub fn select_claims(claims: &[CheckClaim], top_n: usize) -> Vec<&CheckClaim> {
    let n = if top_n == 0 { 8 } else { top_n };
    let mut sorted: Vec<&CheckClaim> = claims.iter().collect();
    sorted.sort_by(|a, b| leverage(b).cmp(&leverage(a)).then(a.id.cmp(&b.id)));
    let mut out: Vec<&CheckClaim> = sorted.iter().filter(|c| c.kind == ClaimKind::PriorDivergence).copied().collect();
    for c in sorted {
        if out.len() >= n {
            break;
        }
        if !out.iter().any(|o| o.id == c.id) {
            out.push(c);
        }
    }
    out
}

fn how_to_check(k: ClaimKind) -> &'static str {
    match k {
        ClaimKind::SharedCause => "Fetch a failing build of at least two of the jobs yourself and compare the first failure lines; one differing signature refutes \"one cause\".",
        ClaimKind::FixState => "Read the PR's state, labels, draft flag and mergeability yourself; merged and closed-unmerged are different answers.",
        ClaimKind::CodeLocation => "Open the file at the cited line in the named checkout; check the line says what the claim says, then check one failing build reaches it.",
        ClaimKind::NotReal => "Read the job's config (focus, description, alert email) and its latest builds; a by-design or stale entry needs evidence, not a name.",
        ClaimKind::Recovery => "Read the job's last five builds; absence from a snapshot alone does not show recovery.",
        ClaimKind::PriorDivergence => "Read both explanations and their evidence; report which is better supported and why.",
        ClaimKind::Other => "Re-derive the claim from its sources without relying on the investigator's wording.",
    }
}

/// The Phase 4 cross-check brief.
pub fn crosscheck_brief(x: &CrossCheckBrief) -> String {
    let picked = select_claims(&x.claims, x.top_n);
    let mut s = String::new();
    let _ =
        writeln!(s, "# Cross-check brief: {} claim(s) from {} cluster investigation(s)\n", picked.len(), x.clusters);
    let _ = writeln!(s, "Dataset: {} dashboard, snapshot of {}.\n", x.dataset, x.snapshot_date);
    s.push_str("You did not take part in the investigations and you should not trust their narratives. For each claim below, gather the evidence again yourself, read-only, and answer with one verdict:\n\n");
    s.push_str("- **CONFIRMED** — your own evidence matches the claim.\n- **PARTIALLY CONFIRMED** — it mostly holds; say what must change (a line number, a count, a state).\n- **REFUTED** — your evidence contradicts it.\n- **INSUFFICIENT EVIDENCE** — you could not decide; say what is missing.\n\n");
    s.push_str("Give 2-4 sentences per claim naming the artifacts you read (URL, `path:line`, PR state with the time you read it). Be terse; under 1,500 words in all.\n\n");
    if let Some(p) = &x.prior_report {
        let _ = writeln!(s, "A prior report exists ({p}); claims marked *prior divergence* adopt a different explanation than it did.\n");
    }
    for (i, c) in picked.iter().enumerate() {
        let _ = writeln!(s, "## C{} — {} ({})\n", i + 1, cell(&c.pattern), cell(&c.id));
        let _ = writeln!(s, "**Claim**: {}\n", cell(c.text.trim()));
        let kind = match c.kind {
            ClaimKind::SharedCause => "shared cause",
            ClaimKind::FixState => "fix PR state",
            ClaimKind::CodeLocation => "code location",
            ClaimKind::NotReal => "not a real failure",
            ClaimKind::Recovery => "recovery",
            ClaimKind::PriorDivergence => "prior divergence",
            ClaimKind::Other => "other",
        };
        let _ = writeln!(
            s,
            "**Kind**: {kind}; {} job(s) depend on it{}.\n",
            c.jobs_affected,
            c.tier.map(|t| format!("; supports a Tier {t} action")).unwrap_or_default()
        );
        if !c.sources.is_empty() {
            let mut src = c.sources.clone();
            src.sort();
            let _ = writeln!(s, "**Sources offered**: {}\n", src.join(", "));
        }
        if !c.evidence_ids.is_empty() {
            let _ = writeln!(s, "**Evidence ids**: {}\n", c.evidence_ids.join(" "));
        }
        let _ = writeln!(s, "**How to check**: {}\n", how_to_check(c.kind));
    }
    let rest: Vec<&CheckClaim> = x.claims.iter().filter(|c| !picked.iter().any(|p| p.id == c.id)).collect();
    if !rest.is_empty() {
        let mut ids: Vec<&str> = rest.iter().map(|c| c.id.as_str()).collect();
        ids.sort();
        let _ = writeln!(
            s,
            "## Not selected\n\n{} lower-leverage claim(s) are not part of this check: {}.",
            ids.len(),
            ids.join(", ")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(id: &str, kind: ClaimKind, tier: Option<u8>, jobs: usize) -> CheckClaim {
        CheckClaim {
            id: id.into(),
            pattern: "Pattern A".into(),
            kind,
            text: format!("claim {id}"),
            jobs_affected: jobs,
            tier,
            evidence_ids: vec!["ev-000000000001".into()],
            sources: vec!["o/r#1".into()],
        }
    }

    #[test]
    fn selection_prefers_leverage_and_keeps_divergences() {
        let claims = vec![
            claim("a", ClaimKind::Other, Some(3), 50),
            claim("b", ClaimKind::FixState, Some(1), 4),
            claim("c", ClaimKind::SharedCause, Some(2), 40),
            claim("d", ClaimKind::PriorDivergence, None, 1),
            claim("e", ClaimKind::CodeLocation, Some(2), 2),
        ];
        let ids: Vec<&str> = select_claims(&claims, 3).iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, vec!["d", "b", "c"]);
        let text = crosscheck_brief(&CrossCheckBrief {
            dataset: "failures".into(),
            snapshot_date: "2026-05-10".into(),
            clusters: 2,
            claims,
            top_n: 3,
            prior_report: Some("prior.md".into()),
        });
        assert!(text.contains("## C1 — Pattern A (d)"));
        assert!(text.contains("2 lower-leverage claim(s) are not part of this check: a, e."));
    }

    #[test]
    fn investigation_brief_is_filled() {
        let b = ClusterBrief {
            windows: Vec::new(),
            id: "A".into(),
            name: "capdo".into(),
            dataset: "failures".into(),
            snapshot_date: "2026-11-21".into(),
            jobs: vec![BriefJob {
                name: "ci-x".into(),
                figure: "failing_days 400".into(),
                severity: "critical".into(),
                config: Some("config/jobs/x.yaml:12".into()),
                alert_email: None,
                evidence_ids: vec!["ev-0123456789ab".into()],
            }],
            builds: vec![SampledBuild {
                job: "ci-x".into(),
                build_id: "100".into(),
                url: "https://prow.k8s.io/view/gs/b/logs/ci-x/100".into(),
                result: "FAILURE".into(),
                started: "2026-11-20".into(),
                evidence_id: Some("ev-aaaaaaaaaaaa".into()),
            }],
            excerpts: vec![BriefExcerpt {
                evidence_id: "ev-bbbbbbbbbbbb".into(),
                locator: "build-log.txt#L9".into(),
                text: "a ``` fence".into(),
            }],
            ..Default::default()
        };
        let t = investigation_brief(&b);
        assert!(t.contains(
            "| `ci-x` | failing_days 400 | critical | `config/jobs/x.yaml:12` | none set | ev-0123456789ab |"
        ));
        assert!(t.contains("Fewer than two sampled builds for: `ci-x`."));
        assert!(t.contains("````\na ``` fence\n````"));
        assert_eq!(t, investigation_brief(&b), "deterministic");
    }

    /// A job name, test text or log with a line break, a Markdown heading, a table pipe,
    /// NUL and ESC: every table row keeps its columns, nothing opens a heading, no control
    /// character is written raw (the log's lines stay lines inside its fence).
    #[test]
    fn hostile_ci_text_is_escaped_in_briefs() {
        let evil = "ci-evil\n# Heading | x\u{0}y\u{1b}[31mred";
        let b = ClusterBrief {
            windows: Vec::new(),
            id: "A".into(),
            name: format!("cluster of {evil}"),
            dataset: "failures".into(),
            snapshot_date: "2026-11-21".into(),
            jobs: vec![BriefJob {
                name: evil.into(),
                figure: "11".into(),
                severity: "low".into(),
                config: None,
                alert_email: None,
                evidence_ids: Vec::new(),
            }],
            builds: vec![SampledBuild {
                job: evil.into(),
                build_id: "1".into(),
                url: "https://prow.k8s.io/view/gs/b/logs/ci evil)/1".into(),
                result: "FAILURE".into(),
                started: "2026-11-20".into(),
                evidence_id: None,
            }],
            excerpts: vec![BriefExcerpt {
                evidence_id: "ev-bbbbbbbbbbbb".into(),
                locator: format!("logs/{evil}/1/build-log.txt#L1"),
                text: "E1127 \u{1b}[31mboom\u{0}\n# Heading".into(),
            }],
            ..Default::default()
        };
        let t = investigation_brief(&b);
        assert!(!t.chars().any(|c| c.is_control() && c != '\n'), "a raw control character:\n{t:?}");
        let fenced: Vec<&str> = t.split("```").collect();
        for (i, part) in fenced.iter().enumerate() {
            if i % 2 == 0 {
                assert!(!part.lines().any(|l| l.starts_with("# Heading")), "a heading outside the fence:\n{t}");
            }
        }
        for row in t.lines().filter(|l| l.starts_with('|') && l.contains("ci-evil")) {
            let cols = row.replace("\\|", "").matches('|').count();
            assert!(cols == 7 || cols == 6, "a row broke its table: {row}");
            assert!(row.contains("`ci-evil # Heading \\| x\\0y\\u{1b}[31mred`"), "{row}");
        }
        assert!(t.contains("(https://prow.k8s.io/view/gs/b/logs/ci%20evil%29/1)"), "{t}");
        assert!(t.contains("E1127 \\u{1b}[31mboom\\0\n# Heading\n```"), "log lines kept in the fence: {t}");
        let x = CrossCheckBrief {
            claims: vec![CheckClaim {
                pattern: evil.into(),
                text: evil.into(),
                ..claim("c1", ClaimKind::Other, None, 1)
            }],
            top_n: 5,
            ..Default::default()
        };
        let t = crosscheck_brief(&x);
        assert!(!t.chars().any(|c| c.is_control() && c != '\n'), "{t:?}");
        assert!(!t.lines().any(|l| l.starts_with("# Heading")), "{t}");
    }
}
