//! `report.md`: the runbook's Appendix B skeleton, filled with everything a snapshot
//! supports. Sections that need later stages (build logs, PR state) say what is
//! missing and what would provide it. Every job row cites snapshot evidence by id;
//! the cited items are listed in the Evidence appendix.

use crate::{figure, Cited};
use citriage_analysis::misclass::{entry_evidence, entry_excerpt};
use citriage_analysis::severity::Severity;
use citriage_analysis::Triage;
use citriage_model::escape::{md_cell as cell, md_code as code};
use citriage_model::{Dataset, Evidence};
use std::fmt::Write;

/// Rows shown per pattern table before the rest is summarized.
const ROWS_PER_PATTERN: usize = 15;

/// Sub-patterns written out per pattern.
const SUB_PATTERNS_SHOWN: usize = 5;

/// `A`, `B`, ... `Z`, `AA`, `AB`, ...
pub fn pattern_letter(i: usize) -> String {
    citriage_analysis::select::letter(i)
}

fn pct(a: usize, b: usize) -> String {
    if b == 0 {
        "0".into()
    } else {
        format!("{:.0}", a as f64 * 100.0 / b as f64)
    }
}

fn ev_link(id: &str) -> String {
    format!("[{id}](#{id})")
}

fn kind_name(k: citriage_model::EvidenceKind) -> &'static str {
    match k {
        citriage_model::EvidenceKind::SnapshotEntry => "snapshot entry",
        citriage_model::EvidenceKind::BuildLogExcerpt => "build-log excerpt",
        citriage_model::EvidenceKind::JunitCase => "JUnit case",
        citriage_model::EvidenceKind::ProwjobState => "prowjob state",
        citriage_model::EvidenceKind::BuildResult => "build result",
        citriage_model::EvidenceKind::PullRequestState => "PR state",
        citriage_model::EvidenceKind::IssueState => "issue state",
        citriage_model::EvidenceKind::JobConfig => "job config",
        citriage_model::EvidenceKind::OwnersFile => "OWNERS file",
        citriage_model::EvidenceKind::SourceLine => "source line",
        citriage_model::EvidenceKind::GitCommit => "commit",
        citriage_model::EvidenceKind::ReleaseInfo => "release info",
    }
}

/// Renders the report; returns the Markdown and the evidence it cites.
pub fn render_markdown(t: &Triage) -> (String, Vec<Evidence>) {
    let mut cited = Cited::default();
    let ds = t.snapshot.dataset;
    let date = t.snapshot.date;
    let mut s = String::new();
    let snap_for_evidence = citriage_model::Snapshot { meta: t.snapshot.clone(), jobs: Vec::new() };
    let metric = match ds {
        Dataset::Failures => "Days",
        Dataset::Flakes => "Consistency",
    };
    let picked_jobs: usize = t.selection.picks.iter().map(|p| p.count).sum();
    let k = t.selection.picks.len();
    let misclassified: std::collections::BTreeSet<&str> =
        t.misclassifications.iter().flat_map(|f| f.jobs.iter().map(String::as_str)).collect();

    // ---- Header -------------------------------------------------------------------
    let _ = writeln!(s, "# Kubernetes CI {} — Triage Report\n", ds.title());
    let _ = writeln!(s, "**Date**: {date} (the snapshot's date)  ");
    let _ = writeln!(
        s,
        "**Source**: [`{d}-latest.json`]({json}) (HTML view: [`{d}-latest.html`]({html})). Snapshot: {n} jobs, read from `{src}` (sha256 `{sha}`).  ",
        d = ds.as_str(),
        json = ds.public_json_url(),
        html = ds.public_html_url(),
        n = t.job_count,
        src = t.snapshot.source,
        sha = &t.snapshot.sha256[..t.snapshot.sha256.len().min(16)]
    );
    let _ = writeln!(
        s,
        "**Method**: citriage snapshot triage — {} ordered categorization rules ({}), cluster scoring and selection per the runbook's Appendix A, {}, and misclassification checks{}. Every job-level claim cites the snapshot entry or build it rests on (evidence ids link to the [Evidence](#evidence) appendix). Build logs and PR/issue state were not read in this run.\n",
        t.rule_count,
        t.rules_origin,
        match &t.drift {
            Some(d) => format!("drift against the {} snapshot in the store", d.prior_date),
            None => "no drift (no earlier snapshot of this dataset was available)".to_string(),
        },
        if t.jobs_with_builds > 0 {
            format!(" (snapshot-only and, for the {} listed jobs with ingested builds, build-backed)", t.jobs_with_builds)
        } else {
            " (snapshot-only: no builds were ingested)".to_string()
        }
    );
    let mut banner = Vec::new();
    // The records' news first: a fix that failed after it merged is the loudest there is.
    if let Some(r) = &t.records {
        banner.extend(crate::records::banner_markdown(r));
    }
    if let Some(d) = &t.drift {
        banner.push(format!(
            "Since {}: {} job(s) added, {} removed (recovered or dropped){}.",
            d.prior_date,
            d.added.len(),
            d.removed.len(),
            match &d.integrity {
                Some(i) if !i.violations.is_empty() => format!(
                    "; {} of {} common jobs broke the failing_days integrity check",
                    i.violations.len(),
                    i.common
                ),
                _ => String::new(),
            }
        ));
    }
    if !misclassified.is_empty() {
        banner.push(format!("{} listed job(s) are flagged as not real {} (see §2).", misclassified.len(), ds.as_str()));
    }
    if !banner.is_empty() {
        let _ = writeln!(s, "> ⚠️ **Status banner**: {}\n", banner.join(" "));
    }
    s.push_str("---\n\n## Quick navigation\n");
    s.push_str("- [Status — what's been done in this run](#status)\n- [TL;DR](#tldr)\n");
    let _ = writeln!(s, "- [The {k} patterns](#1-patterns)");
    let _ = writeln!(s, "- [Misclassifications (NOT real {})](#2-misclassifications)", ds.as_str());
    s.push_str("- [Action plan (Tier 0–5)](#3-action-plan)\n- [Methodology](#4-methodology)\n- [Verifications and open questions](#5-verifications)\n- [Appendix](#appendix)\n\n---\n\n");

    // ---- Status ---------------------------------------------------------------------
    s.push_str("<a id=\"status\"></a>\n## Status — what's been done in this run\n\n### Created in this run\n");
    s.push_str("| Artifact | Description | Status (as of the snapshot date) |\n|---|---|---|\n");
    let _ = writeln!(s, "| `report.md`, `report.json` | this report and its JSON twin | written |");
    let _ = writeln!(
        s,
        "| `categorized.json`, `by-category.txt`, `top30.txt`{} | working data files (see Appendix) | written |\n",
        if ds == Dataset::Flakes { ", `top-flaky-tests.txt`, `top-tests-by-lane.txt`" } else { "" }
    );
    s.push_str("citriage filed no PR or issue: it only reads.\n\n### Open external nudge-targets\n");
    s.push_str("None listed: pull-request and issue state was not read in this run, so no PR can be named with a verified state.\n\n");
    s.push_str("### Open work (not yet shipped)\n");
    for (i, p) in t.selection.picks.iter().enumerate() {
        let _ = writeln!(
            s,
            "- Investigate Pattern {} — {} ({} jobs): sample builds, first failure line, JUnit, owning SIG.",
            pattern_letter(i),
            code(&p.category),
            p.count
        );
    }
    s.push_str("\n---\n\n");

    // ---- TL;DR ----------------------------------------------------------------------
    s.push_str("<a id=\"tldr\"></a>\n## TL;DR\n\n");
    let _ = writeln!(
        s,
        "**{picked_jobs} of {} ({}%) jobs fall into the {k} clusters selected for investigation**, out of {} categories.\n",
        t.job_count,
        pct(picked_jobs, t.job_count),
        t.categorized.categories.len()
    );
    s.push_str("**Three takeaways**:\n");
    let mut takeaways = Vec::new();
    if let Some(c) = t.categorized.categories.first() {
        let (critical, worst) = match ds {
            Dataset::Failures => (
                c.jobs.iter().filter(|j| j.severity == Severity::Critical).count(),
                format!("{} failing days at worst", c.jobs.first().map(|j| figure(&j.entry.stats)).unwrap_or_default()),
            ),
            Dataset::Flakes => (
                c.jobs.iter().filter(|j| j.severity == Severity::Critical).count(),
                format!("consistency {} at worst", c.jobs.first().map(|j| figure(&j.entry.stats)).unwrap_or_default()),
            ),
        };
        takeaways.push(format!(
            "The largest category is {} with {} of {} jobs ({}%), {critical} of them critical; {worst}.",
            code(&c.name),
            c.count(),
            t.job_count,
            pct(c.count(), t.job_count)
        ));
    }
    if misclassified.is_empty() {
        takeaways.push("No snapshot-only misclassification fired (harness names, consistency paradox, brand-new lanes, by-design lanes).".into());
    } else {
        let kinds: std::collections::BTreeSet<&str> = t.misclassifications.iter().map(|f| f.kind.title()).collect();
        takeaways.push(format!(
            "{} listed job(s) are not real {}: {}. Discount them before counting regressions.",
            misclassified.len(),
            ds.as_str(),
            kinds.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    match &t.drift {
        Some(d) => takeaways.push(format!(
            "Since {} ({} day(s)): {} added, {} removed, {} reappeared{}.",
            d.prior_date,
            d.days_between,
            d.added.len(),
            d.removed.len(),
            d.reappeared.len(),
            match (&d.integrity, ds) {
                (Some(i), _) => format!("; {} of {} common jobs grew by exactly {} day(s)", i.consistent, i.common, d.days_between),
                (None, Dataset::Flakes) => format!("; consistency worsened by more than {:.2} on {} job(s)", d.threshold, d.worsened.len()),
                _ => String::new(),
            }
        )),
        None => takeaways.push("No earlier snapshot of this dataset was available, so drift is not assessed; import one (`citriage import`) to get it.".into()),
    }
    for (i, tk) in takeaways.iter().take(3).enumerate() {
        let _ = writeln!(s, "{}. {tk}", i + 1);
    }
    s.push('\n');
    s.push_str(match ds {
        Dataset::Failures => "`failing_days` counts days since the last passing run (or the first run when a job never passed); it is biased for run_if_changed postsubmits and weekly periodics, which rarely run, and it cannot see builds that errored before creating a pod.\n\n",
        Dataset::Flakes => "`consistency` counts a commit as consistent when all its runs agree, so a job that fails every run scores 1.0; `test_flakes` also counts harness steps (`Up`, `Node Tests`, ...) as tests.\n\n",
    });
    s.push_str("---\n\n");

    // ---- Patterns ---------------------------------------------------------------------
    let _ = writeln!(s, "<a id=\"1-patterns\"></a>\n## 1. The {k} Patterns\n");
    s.push_str("Patterns are the selected clusters, ordered by score (runbook Appendix A). At snapshot level a pattern is a job category; splitting it by failure signature needs build logs.\n\n");
    for (i, p) in t.selection.picks.iter().enumerate() {
        let Some(c) = t.categorized.get(&p.category) else { continue };
        let letter = pattern_letter(i);
        let _ = writeln!(s, "### Pattern {letter} — {} ({} jobs)\n", c.name, c.count());
        let sev: Vec<String> = Severity::ALL
            .iter()
            .filter_map(|sv| c.severity_counts().get(sv).map(|n| format!("{n} {}", sv.as_str())))
            .collect();
        let _ = writeln!(s, "**One-line summary**: {} jobs in {}: {}.\n", c.count(), code(&c.name), sev.join(", "));
        let _ = writeln!(s, "**Why investigated**: {}.\n", p.reasons.join("; "));
        let flagged: Vec<&str> =
            c.jobs.iter().map(|j| j.entry.job.as_str()).filter(|j| misclassified.contains(j)).collect();
        if !flagged.is_empty() {
            let _ = writeln!(s, "**Misclassified members**: {} of these jobs are flagged in §2.\n", flagged.len());
        }
        let pat = t.patterns.iter().find(|cp| cp.category == c.name);
        if let Some(cp) = pat.filter(|cp| !cp.sub_patterns.is_empty()) {
            let known: Vec<String> = cp
                .sub_patterns
                .iter()
                .filter_map(|sp| sp.signature.as_ref().map(|k| format!("{} ({})", k.name, k.class)))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            let _ = writeln!(
                s,
                "**Root cause**: {} failure(s) in {} build(s) of the last 7 days fall into {} failure signature(s) (sub-patterns below){}. The introducing change is not determined from build data alone.\n",
                cp.failures,
                cp.builds,
                cp.sub_patterns.len(),
                if known.is_empty() { String::new() } else { format!("; known failure modes: {}", known.join(", ")) }
            );
        } else if t.jobs_with_builds > 0 {
            s.push_str("**Root cause**: not determined: the ingested builds of these jobs in the last 7 days carry no failed JUnit case with a failure text (the failure is in the build log or the harness).\n\n");
        } else {
            s.push_str("**Root cause**: not determinable from the snapshot, which carries only job names and figures. It needs each job's sampled builds (first failure line, JUnit failures) — `citriage fetch` ingests them.\n\n");
        }
        s.push_str("**Causal chain**:\n- Introduced by: unknown — see the uncertainty section\n- Exposed by: unknown — see the uncertainty section\n\n");
        let figs: std::collections::BTreeMap<&str, &citriage_analysis::metrics::corrected::JobFigures> =
            t.job_figures.iter().map(|f| (f.job.as_str(), f)).collect();
        let with_builds = !figs.is_empty();
        if with_builds {
            let _ = writeln!(
                s,
                "**Affected jobs** (most severe first; pass rate, streak and last pass from ingested builds, 7 days to the snapshot date; *Corrected* rates the job on the same rubric from those builds):\n\n| Job | {metric} | Severity | Corrected | Pass rate (n) | Streak | Last pass | Evidence |\n|---|---:|---|---|---:|---:|---|---|"
            );
        } else {
            let _ = writeln!(
                s,
                "**Affected jobs** (most severe first):\n\n| Job | {metric} | Severity | Evidence |\n|---|---:|---|---|"
            );
        }
        for j in c.jobs.iter().take(ROWS_PER_PATTERN) {
            let field = match ds {
                Dataset::Failures => "failing_days",
                Dataset::Flakes => "consistency",
            };
            let ev = entry_evidence(&snap_for_evidence, &j.entry.job, &[field], entry_excerpt(&j.entry.stats));
            let id = cited.cite(ev);
            if with_builds {
                let corrected = figs
                    .get(j.entry.job.as_str())
                    .and_then(|f| f.corrected_severity(ds))
                    .map(|(sev, _)| sev.as_str().to_string())
                    .unwrap_or_else(|| "–".into());
                let (rate, streak, last) = match figs.get(j.entry.job.as_str()) {
                    Some(f) => (
                        f.pass_rate
                            .map(|r| format!("{:.0}% ({})", r * 100.0, f.sample))
                            .unwrap_or_else(|| format!("– ({})", f.sample)),
                        format!("{} builds", f.streak_builds),
                        f.last_pass.map(|d| d.to_string()).unwrap_or_else(|| "never".into()),
                    ),
                    None => ("no builds".into(), "–".into(), "–".into()),
                };
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} | {} | {} | {} |",
                    code(&j.entry.job),
                    figure(&j.entry.stats),
                    j.severity.as_str(),
                    corrected,
                    rate,
                    streak,
                    last,
                    ev_link(&id)
                );
            } else {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} |",
                    code(&j.entry.job),
                    figure(&j.entry.stats),
                    j.severity.as_str(),
                    ev_link(&id)
                );
            }
        }
        if c.count() > ROWS_PER_PATTERN {
            let more = c.count() - ROWS_PER_PATTERN;
            if with_builds {
                let _ = writeln!(s, "| … and {more} more | | | | | | | `categorized.json` |");
            } else {
                let _ = writeln!(s, "| … and {more} more | | | `categorized.json` |");
            }
        }
        s.push('\n');
        if ds == Dataset::Flakes {
            if let Some((_, tests)) = t.top_tests_by_lane.iter().find(|(l, _)| *l == c.name) {
                let top: Vec<String> = tests
                    .iter()
                    .take(3)
                    .map(|r| format!("{} ({} in {} job(s))", code(&r.test), r.total, r.jobs.len()))
                    .collect();
                let _ = writeln!(s, "**Top flaking tests in this lane**: {}.\n", top.join(", "));
            }
        }
        let mut owners: Vec<String> = Vec::new();
        if let Some(cp) = pat.filter(|cp| !cp.sub_patterns.is_empty()) {
            s.push_str("**Sub-patterns** (by failure signature, largest first):\n\n");
            for (k, sp) in cp.sub_patterns.iter().take(SUB_PATTERNS_SHOWN).enumerate() {
                let name = sp
                    .signature
                    .as_ref()
                    .map(|sig| sig.name.clone())
                    .unwrap_or_else(|| sp.text.lines().next().unwrap_or("").chars().take(90).collect());
                let _ = writeln!(
                    s,
                    "#### Pattern {letter}.{} — {} ({} failures, {} jobs)\n",
                    k + 1,
                    cell(&name),
                    sp.failures,
                    sp.jobs.len()
                );
                let ids: Vec<String> = sp.evidence.iter().map(|e| ev_link(&cited.cite(e.clone()))).collect();
                let _ = writeln!(
                    s,
                    "**Signature**: cluster `{}`{}; seen {} to {}.  ",
                    sp.cluster_id,
                    sp.signature
                        .as_ref()
                        .map(|k| format!(", known failure mode `{}` ({})", k.id, k.class))
                        .unwrap_or_default(),
                    sp.first_seen.map(|d| d.to_string()).unwrap_or_default(),
                    sp.last_seen.map(|d| d.to_string()).unwrap_or_default()
                );
                let _ = writeln!(s, "**Builds**: {}  ", if ids.is_empty() { "—".to_string() } else { ids.join(" ") });
                let shown: Vec<String> = sp.jobs.iter().take(6).map(|j| code(j)).collect();
                let more =
                    if sp.jobs.len() > 6 { format!(" … and {} more", sp.jobs.len() - 6) } else { String::new() };
                let _ = writeln!(s, "**Jobs**: {}{more}  ", shown.join(", "));
                let tests: Vec<String> = sp.tests.iter().take(3).map(|(t, n)| format!("{} ({n})", code(t))).collect();
                let _ = writeln!(s, "**Tests**: {}  ", tests.join(", "));
                if let Some(o) = &sp.owner {
                    owners.push(o.clone());
                    let _ = writeln!(s, "**Owner**: {o} (from the tests' `[sig-{o}]` tags)  ");
                }
                let _ = writeln!(
                    s,
                    "**Fix shape**: {}\n",
                    sp.signature
                        .as_ref()
                        .map(|k| cell(&k.fix))
                        .unwrap_or_else(|| "needs investigation — see Tier 3".to_string())
                );
                // The parts of the failure text that differ between members (go.k8s.io/triage spans).
                let mut varies: Vec<String> = Vec::new();
                let mut at = 0usize;
                for (i, len) in sp.spans.iter().enumerate() {
                    let end = (at + len).min(sp.text.len());
                    if i % 2 == 1 && end > at && sp.text.is_char_boundary(at) && sp.text.is_char_boundary(end) {
                        let seg = sp.text[at..end].trim();
                        if !seg.is_empty() && varies.len() < 8 {
                            varies.push(code(&seg.chars().take(40).collect::<String>()));
                        }
                    }
                    at = end;
                }
                if !varies.is_empty() {
                    let _ = writeln!(
                        s,
                        "**Varies between members** (highlighted spans of the text below): {}\n",
                        varies.join(" · ")
                    );
                }
                let excerpt: String = sp.text.lines().take(6).collect::<Vec<_>>().join("\n");
                let _ = writeln!(s, "```\n{}\n```\n", excerpt.replace("```", "'''"));
            }
            if cp.sub_patterns.len() > SUB_PATTERNS_SHOWN {
                let rest: usize = cp.sub_patterns.iter().skip(SUB_PATTERNS_SHOWN).map(|sp| sp.failures).sum();
                let _ = writeln!(
                    s,
                    "… and {} more sub-pattern(s) with {rest} failure(s) in all (see `report.json`).\n",
                    cp.sub_patterns.len() - SUB_PATTERNS_SHOWN
                );
            }
        }
        s.push_str("**Fix shape (overall)**: needs investigation — see Tier 3.\n\n");
        owners.sort();
        owners.dedup();
        if owners.is_empty() {
            s.push_str("**Owner**: not derivable from the snapshot (needs the job config's `testgrid-alert-email` or the tests' `[sig-x]` tags).\n\n");
        } else {
            let _ = writeln!(
                s,
                "**Owner**: {} (from the tests' `[sig-x]` tags; the job config's alert email is not read here).\n",
                owners.join(", ")
            );
        }
    }
    s.push_str("---\n\n");

    // ---- Misclassifications -------------------------------------------------------------
    let _ = writeln!(s, "<a id=\"2-misclassifications\"></a>\n## 2. Misclassifications (NOT real {})\n", ds.as_str());
    if t.misclassifications.is_empty() {
        s.push_str("None found by the snapshot-only checks (harness names in `test_flakes`, consistency paradox, brand-new lane families, by-design lanes and tests).\n\n");
    } else {
        s.push_str("| Entry | Kind | Jobs | Reality | Evidence |\n|---|---|---:|---|---|\n");
        for f in &t.misclassifications {
            let ids: Vec<String> = f.evidence.iter().map(|e| ev_link(&cited.cite(e.clone()))).collect();
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                cell(&f.subject),
                f.kind.title(),
                f.jobs.len(),
                cell(&f.reality),
                ids.join(" ")
            );
        }
        s.push('\n');
        for f in &t.misclassifications {
            if f.jobs.len() > 1 {
                let shown: Vec<String> = f.jobs.iter().take(12).map(|j| code(j)).collect();
                let more =
                    if f.jobs.len() > 12 { format!(" … and {} more", f.jobs.len() - 12) } else { String::new() };
                let _ = writeln!(s, "- {} — {}: {}{more}", f.kind.title(), cell(&f.subject), shown.join(", "));
            }
        }
        s.push('\n');
    }
    s.push_str("Checks that need build data, so this run does not answer them:\n\n");
    for n in &t.needs_build_data {
        let cands = if n.candidates.is_empty() {
            String::new()
        } else {
            let shown: Vec<String> = n.candidates.iter().take(8).map(|j| code(j)).collect();
            format!(
                " Candidates: {}{}.",
                shown.join(", "),
                if n.candidates.len() > 8 {
                    format!(" … and {} more", n.candidates.len() - 8)
                } else {
                    String::new()
                }
            )
        };
        let _ = writeln!(s, "- {} Not answered: {}.{cands}", n.question, n.how_to_answer);
    }
    s.push_str("\n---\n\n");

    // ---- Action plan ----------------------------------------------------------------------
    s.push_str("<a id=\"3-action-plan\"></a>\n## 3. Action plan\n\n");
    use citriage_analysis::links::LinkState;
    let window_start = date.plus(-14);
    let pr_cell = |l: &citriage_analysis::links::PrLink| format!("[{}]({}) {}", l.reference, l.url, cell(&l.title));
    let fixed = |p: &citriage_analysis::links::PlacedLink| {
        if p.patterns.is_empty() {
            "no selected pattern matched".to_string()
        } else {
            p.patterns.join(", ")
        }
    };
    s.push_str("### 🟢 Tier 0 — Done in this run\n\n| # | Item | Status (as of the snapshot date) |\n|---|---|---|\n");
    let mut n0 = 0;
    for (item, status) in t.records.as_ref().map(crate::records::tier0_rows).unwrap_or_default() {
        n0 += 1;
        let _ = writeln!(s, "| 0.{n0} | {item} | {status} |");
    }
    for p in &t.links {
        if let LinkState::Merged { at } = &p.link.state {
            n0 += 1;
            let ev = p.link.evidence.as_ref().map(|e| ev_link(&cited.cite(e.clone()))).unwrap_or_default();
            let when = if *at >= window_start { String::new() } else { " (before the 14-day window)".to_string() };
            let _ = writeln!(
                s,
                "| 0.{n0} | {} — fixes {} ({} job(s)) | ✅ MERGED {at}{when} {ev} |",
                pr_cell(&p.link),
                cell(&fixed(p)),
                p.jobs
            );
        }
    }
    if n0 == 0 {
        let why = if t.links.is_empty() {
            "no fix PR was linked to these failures (`triage --links FILE`)"
        } else {
            "none of the linked PRs has merged"
        };
        let _ = writeln!(s, "| 0.1 | No fix is known to have merged: {why} | — |");
    }
    s.push('\n');
    s.push_str("### 🟢 Tier 1 — Nudge already-written fixes (highest leverage)\n\n| # | Action | Cleared | Block | Status (as of the snapshot date) |\n|---|---|---:|---|---|\n");
    let mut n1 = 0;
    for p in &t.links {
        let ev = p.link.evidence.as_ref().map(|e| ev_link(&cited.cite(e.clone()))).unwrap_or_default();
        let (action, block, status) = match &p.link.state {
            LinkState::Merged { .. } => continue,
            LinkState::Open { draft, blocking } => (
                format!("Nudge {} for {}", pr_cell(&p.link), cell(&fixed(p))),
                if blocking.is_empty() {
                    if *draft {
                        "draft".to_string()
                    } else {
                        "review".to_string()
                    }
                } else {
                    blocking.join(", ")
                },
                format!(
                    "{} OPEN{} {ev}",
                    if blocking.is_empty() && !draft { "🟢" } else { "🟡" },
                    if *draft { " (draft)" } else { "" }
                ),
            ),
            LinkState::ClosedUnmerged => (
                format!("Redo {} (closed without merging) for {}", pr_cell(&p.link), cell(&fixed(p))),
                "needs a new PR".to_string(),
                format!("❌ CLOSED unmerged {ev}"),
            ),
            LinkState::Unknown { why } => (
                format!("Check {} for {}", pr_cell(&p.link), cell(&fixed(p))),
                "state unknown".to_string(),
                format!("not checked: {}", cell(why)),
            ),
        };
        n1 += 1;
        let _ = writeln!(s, "| 1.{n1} | {action} | {} | {} | {status} |", p.jobs, cell(&block));
    }
    if n1 == 0 {
        let _ = writeln!(
            s,
            "| 1.1 | None listed: {} | 0 | — | — |",
            if t.links.is_empty() { "no fix PR was linked to these failures" } else { "every linked PR has merged" }
        );
    }
    s.push('\n');
    s.push_str("### 🟢 Tier 2 — Mechanical fixes (write the PR)\n\n| # | Action | Cleared | Effort | Status (as of the snapshot date) |\n|---|---|---:|---|---|\n");
    let harness: Vec<&citriage_analysis::misclass::Finding> = t
        .misclassifications
        .iter()
        .filter(|f| f.kind == citriage_analysis::misclass::FindingKind::HarnessTestName)
        .collect();
    // Known failure modes with a mechanical fix shape.
    let mut n2 = 0;
    for (i, p) in t.selection.picks.iter().enumerate() {
        let subs = t.patterns.iter().find(|cp| cp.category == p.category).map(|cp| &cp.sub_patterns[..]).unwrap_or(&[]);
        for (k, sp) in subs.iter().enumerate() {
            let Some(sig) = sp.signature.as_ref().filter(|sig| !sig.sketch.is_empty()) else { continue };
            n2 += 1;
            let ev: Vec<String> = sp.evidence.iter().take(1).map(|e| ev_link(&cited.cite(e.clone()))).collect();
            let _ = writeln!(
                s,
                "| 2.{n2} | Pattern {}.{} — `{}`: {} {} | {} | 1-8 lines per job config | not started |",
                pattern_letter(i),
                k + 1,
                sig.id,
                cell(&sig.sketch),
                ev.join(" "),
                sp.jobs.len()
            );
        }
    }
    if harness.is_empty() && n2 == 0 {
        s.push_str("| 2.1 | None: no selected pattern matched a known failure mode with a mechanical fix shape | 0 | — | not started |\n\n");
    } else if harness.is_empty() {
        s.push('\n');
    } else {
        let names: Vec<String> = harness.iter().map(|f| format!("'{}'", f.subject)).collect();
        let jobs: std::collections::BTreeSet<&str> =
            harness.iter().flat_map(|f| f.jobs.iter().map(String::as_str)).collect();
        let _ = writeln!(
            s,
            "| 2.{} | Exclude harness steps from `test_flakes` in the flakes dashboard query (metrics configs, flakes SQL): add {} to its exclusion list `NOT IN ('Test', 'DiffResources', 'DumpClusterLogs', 'DumpFederationLogs')` | {} | 1 line | not started |\n",
            n2 + 1,
            names.join(", "),
            jobs.len()
        );
    }
    s.push_str("### 🟡 Tier 3 — Real bugs (need investigation)\n\n| # | Action | Cleared | Owner | Status (as of the snapshot date) |\n|---|---|---:|---|---|\n");
    let mut n3 = 0;
    for (i, p) in t.selection.picks.iter().enumerate() {
        let letter = pattern_letter(i);
        let subs = t.patterns.iter().find(|cp| cp.category == p.category).map(|cp| &cp.sub_patterns[..]).unwrap_or(&[]);
        if subs.is_empty() {
            n3 += 1;
            let _ = writeln!(s, "| 3.{n3} | Investigate Pattern {letter} ({}): sample 2-3 builds, find the first failure line, split by signature | {} | unknown | not started |", code(&p.category), p.count);
            continue;
        }
        // The largest sub-patterns, each with its evidence; a known failure mode gives its fix direction.
        for (k, sp) in subs.iter().take(2).enumerate() {
            n3 += 1;
            let what = match &sp.signature {
                Some(sig) => {
                    format!("Pattern {letter}.{}: known failure mode `{}` ({}) — {}", k + 1, sig.id, sig.class, sig.fix)
                }
                None => format!(
                    "Pattern {letter}.{}: unknown signature `{}` — find the introducing change",
                    k + 1,
                    sp.text.lines().next().unwrap_or("").chars().take(80).collect::<String>().replace('`', "'")
                ),
            };
            let ev: Vec<String> = sp.evidence.iter().take(1).map(|e| ev_link(&cited.cite(e.clone()))).collect();
            let _ = writeln!(
                s,
                "| 3.{n3} | {} {} | {} | {} | not started |",
                cell(&what),
                ev.join(" "),
                sp.jobs.len(),
                sp.owner.clone().unwrap_or_else(|| "unknown".into())
            );
        }
    }
    s.push_str("\n### 🟠 Tier 4 — Strategic / governance\n\n| # | Action | Why |\n|---|---|---|\n");
    let mut n4 = 0;
    let mut row4 = |s: &mut String, a: String, why: String| {
        n4 += 1;
        let _ = writeln!(s, "| 4.{n4} | {} | {} |", cell(&a), cell(&why));
    };
    match ds {
        Dataset::Failures => {
            row4(
                &mut s,
                "Report failing streaks in builds and the last pass date beside `failing_days`".into(),
                "`failing_days` over-states jobs that run rarely (run_if_changed postsubmits, weekly periodics)".into(),
            );
            if let Some(i) = t.drift.as_ref().and_then(|d| d.integrity.as_ref()) {
                if !i.violations.is_empty() {
                    row4(&mut s, format!("Check the {} job(s) whose failing_days did not grow by the days between snapshots", i.violations.len()), "a reset means the job passed in between; a jump means its last pass fell out of the data (see Methodology)".into());
                }
            }
        }
        Dataset::Flakes => {
            row4(
                &mut s,
                "Publish build consistency and count always-failing commits as failing".into(),
                "commit consistency scores a job that fails every run as 1.0 (the consistency paradox)".into(),
            );
            row4(
                &mut s,
                "Key flaky tests by (classname, name) and drop harness steps".into(),
                "harness steps such as `Up` and `Node Tests` are counted as tests today".into(),
            );
        }
    }
    let new_lanes = t
        .misclassifications
        .iter()
        .filter(|f| f.kind == citriage_analysis::misclass::FindingKind::BrandNewLane)
        .count();
    if new_lanes > 0 {
        row4(
            &mut s,
            format!(
                "Hold {new_lanes} brand-new lane famil(ies) out of regression counts until they have a week of history"
            ),
            "new lanes with no baseline inflate the dashboard (see §2)".into(),
        );
    }
    s.push('\n');
    match ds {
        Dataset::Failures => {
            s.push_str(
                "### 🔵 Tier 5 — Deletion candidates\n\n| # | Job | Days | Why | Evidence |\n|---|---|---:|---|---|\n",
            );
            let old: Vec<&citriage_analysis::flakes::TopJob> =
                t.top_jobs.iter().filter(|j| j.stats.failing_days().is_some_and(|d| d >= 365)).collect();
            if old.is_empty() {
                s.push_str("| 5.1 | none | — | no listed job has failed for a year or more | — |\n");
            }
            for (i, j) in old.iter().enumerate() {
                let ev = entry_evidence(&snap_for_evidence, &j.job, &["failing_days"], entry_excerpt(&j.stats));
                let id = cited.cite(ev);
                let _ = writeln!(s, "| 5.{} | {} | {} | failing for a year or more: review for deletion (frozen branch? depends on a deleted job?) | {} |", i + 1, code(&j.job), figure(&j.stats), ev_link(&id));
            }
            s.push('\n');
        }
        Dataset::Flakes => {
            s.push_str("### 🔵 Tier 5 — Don't bother\n\n");
            s.push_str("- Don't chase harness-step \"flakes\" (`Up`, `Node Tests`, `diffResources`, ...) as test bugs: they are environment failures (§2).\n");
            s.push_str("- Don't file flake issues for by-design lanes and `[Flaky]`-tagged tests (§2).\n");
            s.push_str("- Don't read consistency 1.0 as healthy without the build results behind it (§5).\n\n");
        }
    }
    s.push_str("---\n\n");

    // ---- Methodology ------------------------------------------------------------------------
    s.push_str("<a id=\"4-methodology\"></a>\n## 4. Methodology\n\n");
    let _ = writeln!(
        s,
        "- Categorization: {} categories from {} ordered rules ({}); first match wins.",
        t.categorized.categories.len(),
        t.rule_count,
        t.rules_origin
    );
    let _ = writeln!(
        s,
        "- Cluster selection: score = {}; top {} by score plus the always-include families (kops, architecture lanes with more than {} jobs, the catch-all), at most {}.",
        match ds {
            Dataset::Failures => "ln(count) + max_failing_days / 100",
            Dataset::Flakes => "ln(count) + (1 − min_consistency)",
        },
        t.config.min_clusters,
        t.config.arch_min_jobs,
        t.config.max_clusters
    );
    let sevs: Vec<String> = Severity::ALL
        .iter()
        .filter_map(|sv| t.severity_totals.get(sv).map(|n| format!("{n} {}", sv.as_str())))
        .collect();
    let _ = writeln!(
        s,
        "- Severity ({}): {}.",
        match ds {
            Dataset::Failures => "≥ 365 days critical, 180-364 severe, 90-179 warning, 30-89 moderate, below 30 low",
            Dataset::Flakes => "< 0.5 critical, < 0.7 severe, < 0.85 warning, < 0.95 moderate, else good",
        },
        sevs.join(", ")
    );
    s.push_str("- Investigation, cross-check and PR/issue verification: not run (snapshot-only triage).\n\n");
    let _ = writeln!(s, "What \"{}\" means in the source data: {}\n", match ds { Dataset::Failures => "failing_days", Dataset::Flakes => "consistency" }, match ds {
        Dataset::Failures => "the number of days from the snapshot date back to the job's latest passing run, or to its first run when it never passed; a job is listed when it ran in the last 7 days and has not passed for more than 30 days. Jobs that run rarely accumulate days without new evidence, and builds that errored before a pod was created are invisible to it.",
        Dataset::Flakes => "1 − (commits whose runs disagreed) / (distinct commits) over 7 days. A commit whose runs all failed counts as consistent, so always-failing jobs look healthy; `test_flakes` lists per-test flaky commits (top 10) and includes harness steps the exclusion list misses.",
    });
    s.push_str("### Drift since the prior snapshot\n\n");
    match &t.drift {
        None => s.push_str("No earlier snapshot of this dataset was in the store or given with `--prior`, so drift was not computed.\n\n"),
        Some(d) => {
            let _ = writeln!(s, "Prior: {} (`{}`), {} day(s) before. {} added, {} removed (recovered or dropped), {} reappeared after an absence.\n", d.prior_date, d.prior_source, d.days_between, d.added.len(), d.removed.len(), d.reappeared.len());
            let list = |v: &[citriage_analysis::drift::DriftJob]| -> String {
                let shown: Vec<String> = v.iter().take(10).map(|a| format!("{} ({})", code(&a.entry.job), figure(&a.entry.stats))).collect();
                let more = if v.len() > 10 { format!(" … and {} more", v.len() - 10) } else { String::new() };
                if shown.is_empty() { "none".into() } else { format!("{}{more}", shown.join(", ")) }
            };
            let _ = writeln!(s, "- Added: {}", list(&d.added));
            let _ = writeln!(s, "- Removed: {}", list(&d.removed));
            if !d.reappeared.is_empty() {
                let r: Vec<String> = d.reappeared.iter().take(10).map(|r| format!("{} (last listed {})", code(&r.job), r.last_listed)).collect();
                let _ = writeln!(s, "- Reappeared: {}", r.join(", "));
            }
            if let Some(i) = &d.integrity {
                let _ = writeln!(s, "- Integrity: {} of {} common jobs grew by exactly {} day(s).", i.consistent, i.common, d.days_between);
                if !i.violations.is_empty() {
                    s.push_str("\n| Job | Prior | Now | Expected | Kind |\n|---|---:|---:|---:|---|\n");
                    for v in i.violations.iter().take(25) {
                        let _ = writeln!(s, "| {} | {} | {} | {} | {} |", code(&v.job), v.prior, v.now, v.expected, match v.kind {
                            citriage_analysis::drift::ViolationKind::Reset => "reset (passed in between)",
                            citriage_analysis::drift::ViolationKind::Jumped => "jumped (more days than elapsed)",
                        });
                    }
                    if i.violations.len() > 25 {
                        let _ = writeln!(s, "| … and {} more | | | | see the drift file |", i.violations.len() - 25);
                    }
                }
            }
            if ds == Dataset::Flakes {
                let mv = |v: &[citriage_analysis::drift::ConsistencyMove]| -> String {
                    let shown: Vec<String> = v.iter().take(10).map(|m| format!("{} ({:.3} → {:.3})", code(&m.job), m.prior, m.now)).collect();
                    if shown.is_empty() { "none".into() } else { shown.join(", ") }
                };
                let _ = writeln!(s, "- Consistency worsened by more than {:.3}: {}", d.threshold, mv(&d.worsened));
                let _ = writeln!(s, "- Consistency improved by more than {:.3}: {}", d.threshold, mv(&d.improved));
            }
            s.push('\n');
        }
    }
    if let Some(pd) = &t.pattern_drift {
        let count = |k: citriage_analysis::triage::DriftKind| pd.patterns.iter().filter(|p| p.kind == k).count();
        use citriage_analysis::triage::DriftKind as K;
        let _ = writeln!(
            s,
            "### Pattern drift\n\nFailure patterns of the store's latest clustering run ({} profile), the {} days to {} against the {} days to {}: {} new, {} growing, {} shrinking, {} gone (a change counts when it is at least 3 failures and half the smaller count).\n",
            pd.profile,
            pd.span_days,
            pd.to,
            pd.span_days,
            pd.from,
            count(K::New),
            count(K::Growing),
            count(K::Shrinking),
            count(K::Gone)
        );
        if !pd.patterns.is_empty() {
            s.push_str("| Change | Pattern | Before | After | Failures per day | Failure text | Evidence |\n|---|---|---:|---:|---|---|---|\n");
            for p in pd.patterns.iter().take(20) {
                let days: Vec<String> = p.per_day.iter().map(u64::to_string).collect();
                let ev = p.evidence.as_ref().map(|e| ev_link(&cited.cite(e.clone()))).unwrap_or_else(|| "—".into());
                let _ = writeln!(
                    s,
                    "| {} | `{}` | {} | {} | {} | {} | {} |",
                    p.kind.name(),
                    p.stable_id,
                    p.before,
                    p.after,
                    days.join(" "),
                    cell(&p.text),
                    ev
                );
            }
            if pd.patterns.len() > 20 {
                let _ = writeln!(
                    s,
                    "| … and {} more | | | | | see `citriage cluster --format json` | |",
                    pd.patterns.len() - 20
                );
            }
            s.push('\n');
        }
    }
    if !t.blame.is_empty() {
        s.push_str("### Which change started each pattern\n\n");
        for b in &t.blame {
            let head = match b.kind.as_str() {
                "introduced" => "Introduced by",
                "exposed" => "Exposed by",
                _ => "Introducing change unknown",
            };
            let _ = writeln!(s, "- `{}` — **{head}**: {}", b.stable_id, cell(&b.verdict));
            for e in &b.evidence {
                let _ = writeln!(s, "  - {}", cell(e));
            }
        }
        s.push('\n');
    }
    s.push_str("---\n\n");

    // ---- Verifications ----------------------------------------------------------------------
    s.push_str("<a id=\"5-verifications\"></a>\n## 5. Verifications and open questions\n\n");
    s.push_str("### Q1 — Every listed job is assigned to exactly one category (CONFIRMED)\n");
    let _ = writeln!(
        s,
        "**Verdict**: {} jobs in the snapshot, {} across the categories.\n",
        t.job_count,
        t.categorized.job_count()
    );
    s.push_str("### Still open (not investigated to closure)\n");
    for n in &t.needs_build_data {
        let _ = writeln!(s, "- {} ({})", n.question, n.how_to_answer);
    }
    s.push_str("- Root causes and sub-patterns of every selected pattern: need sampled build logs and JUnit.\n");
    if t.blame.is_empty() {
        s.push_str("- Introducing and exposing changes: need PR/commit history (GitHub state, `git log -S`).\n\n");
    } else {
        s.push_str(
            "- Introducing and exposing changes: see *Which change started each pattern* (the checkouts read).\n\n",
        );
    }
    s.push_str("---\n\n");

    // ---- Appendix -------------------------------------------------------------------------------
    s.push_str("<a id=\"appendix\"></a>\n## Appendix\n\n### Source dashboard\n");
    let _ = writeln!(
        s,
        "- Dashboard HTML: {}\n- Raw JSON: {}\n- This run read: `{}` (sha256 `{}`)\n",
        ds.public_html_url(),
        ds.public_json_url(),
        t.snapshot.source,
        t.snapshot.sha256
    );
    s.push_str("### Categories and scores\n\n| Rank | Category | Jobs | Worst | Score | Selected |\n|---:|---|---:|---:|---:|---|\n");
    for sc in &t.selection.scores {
        let sel = if t.selection.picks.iter().any(|p| p.category == sc.category) { "yes" } else { "" };
        let worst = match ds {
            Dataset::Failures => format!("{}", sc.worst),
            Dataset::Flakes => format!("{:.3}", sc.worst),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {:.3} | {} |",
            sc.rank,
            code(&sc.category),
            sc.count,
            worst,
            sc.score,
            sel
        );
    }
    s.push_str("\n### Working data files\nIn the output folder:\n- `report.md`, `report.json` — this report and its JSON twin\n- `categorized.json` — categorized JSON\n- `by-category.txt` — human-readable breakdown\n- `top30.txt` — oldest/worst across categories\n");
    if ds == Dataset::Flakes {
        s.push_str("- `top-flaky-tests.txt`, `top-tests-by-lane.txt` — tests across jobs and per lane\n");
    }
    if let Some(d) = &t.drift {
        let _ = writeln!(s, "- `drift-from-{}.txt` — drift against the prior snapshot", d.prior_date);
    }
    let evidence = cited.into_vec();
    let _ = writeln!(s, "\n<a id=\"evidence\"></a>\n### Evidence\n\n{} item(s): snapshot entries (locator = source + JSON pointer) and build results (locator = Spyglass page).\n\n| Id | Kind | Locator | Excerpt |\n|---|---|---|---|", evidence.len());
    for e in &evidence {
        let _ = writeln!(
            s,
            "| <a id=\"{id}\"></a>{id} | {} | {} | {} |",
            kind_name(e.kind),
            code(&e.locator),
            code(&e.excerpt),
            id = e.id
        );
    }
    (s, evidence)
}
