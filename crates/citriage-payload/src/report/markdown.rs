//! The Markdown twin of the HTML report: the same sections, tables with every
//! cell escaped, evidence quoted in code spans with its location.

use std::fmt::Write;

use crate::action::CandidateAction;
use crate::evidence::JunitState;
use crate::result::*;
use citriage_model::escape::{md_cell as cell, md_code as code};

fn link(url: Option<&str>, text: &str) -> String {
    match url {
        Some(u) if u.starts_with("http") => {
            format!("[{}]({})", cell(text).replace(['[', ']'], ""), u.replace(' ', "%20").replace(')', "%29"))
        }
        _ => cell(text),
    }
}

/// Renders the Markdown report.
pub fn render_markdown(a: &PayloadAnalysis) -> String {
    let mut o = String::new();
    header(&mut o, a);
    summary_section(&mut o, a);
    history_section(&mut o, a);
    failed_jobs_section(&mut o, a);
    root_causes_section(&mut o, a);
    suspects_section(&mut o, a);
    context_section(&mut o, a);
    action_section(&mut o, a);
    recommendations_section(&mut o, a);
    data_gaps_section(&mut o, a);
    o
}

/// The title and the payload line.
fn header(o: &mut String, a: &PayloadAnalysis) {
    let p = &a.payload;
    let _ = writeln!(o, "# Payload analysis: {}\n", cell(&p.tag));
    let _ = writeln!(
        o,
        "{} · {} · {} · phase **{}**{}\n",
        link(Some(&p.release_url), &p.tag),
        cell(&p.stream_name),
        cell(&p.architecture),
        cell(p.phase.as_str()),
        p.as_of.as_ref().map(|t| format!(" · as of {}", cell(&citriage_model::time::shown(t)))).unwrap_or_default()
    );
}

/// The executive summary.
fn summary_section(o: &mut String, a: &PayloadAnalysis) {
    let _ = writeln!(o, "## Executive summary\n");
    let _ = writeln!(o, "**{}** — {}\n", a.decision.verdict.as_str(), cell(&a.decision.summary));
    let b = &a.blocking;
    let _ = writeln!(
        o,
        "- Blocking jobs: {} passed, {} failed, {} pending (of {})",
        b.succeeded, b.failed, b.pending, b.total
    );
    let _ = writeln!(
        o,
        "- Last all-green payload: {}{}",
        a.baseline.as_deref().map(cell).unwrap_or_else(|| "none within the chain".into()),
        a.hours_since_baseline.map(|h| format!(" ({h:.1} h before)")).unwrap_or_default()
    );
    let _ = writeln!(o, "- Last accepted: {}", a.last_accepted.as_deref().map(cell).unwrap_or_else(|| "none".into()));
    let _ = writeln!(
        o,
        "- New PRs: {} vs the previous payload, {} since the last all-green one",
        a.new_prs.prs.len(),
        a.cumulative_prs.prs.len()
    );
    let _ = writeln!(
        o,
        "- Force-accept: {}",
        if a.decision.force_accept.recommended { "recommended" } else { "not recommended" }
    );
    for r in &a.root_causes {
        let top = a.suspects.iter().find(|s| s.root_cause == r.id);
        let _ = writeln!(
            o,
            "- {} ({}): {} — {} job(s), first failed in {}{}",
            r.id,
            r.class.class.as_str(),
            code(&r.title),
            r.jobs.len(),
            cell(&r.first_failed_in),
            top.map(|s| format!(
                "; top suspect {} ({})",
                a.candidate(&s.candidate).map(|c| c.short()).unwrap_or_default(),
                s.score.total
            ))
            .unwrap_or_default()
        );
    }
    o.push('\n');
}

/// The payload history and the PR sets.
fn history_section(o: &mut String, a: &PayloadAnalysis) {
    let _ = writeln!(
        o,
        "## Payload history\n\n| Payload | Phase | Created | Blocking results | Note |\n|---|---|---|---|---|"
    );
    for r in &a.history {
        let note = if r.all_blocking_green {
            "all blocking green".to_string()
        } else if r.force_accepted {
            "accepted with failed blocking jobs".to_string()
        } else {
            String::new()
        };
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {}{} |",
            cell(&r.tag),
            cell(r.phase.as_str()),
            cell(&r.created.as_deref().map(citriage_model::time::shown).unwrap_or_default()),
            cell(&r.blocking.describe()),
            note,
            r.note.as_ref().map(|n| format!(" {}", cell(n))).unwrap_or_default()
        );
    }
    let _ = writeln!(o);
    for (title, set) in
        [("New in this payload", &a.new_prs), ("Cumulative since the last all-green payload", &a.cumulative_prs)]
    {
        let _ = writeln!(
            o,
            "**{title}** ({} PRs; {}{}):\n",
            set.prs.len(),
            cell(&set.how),
            set.note.as_ref().map(|n| format!(" — {}", cell(n))).unwrap_or_default()
        );
        for pr in &set.prs {
            let _ = writeln!(o, "- {} {}", link(Some(&pr.url), &pr.key()), cell(&pr.title));
        }
        o.push('\n');
    }
}

/// The failed blocking jobs: a table, then each job in detail.
fn failed_jobs_section(o: &mut String, a: &PayloadAnalysis) {
    let _ = writeln!(o, "## Failed blocking jobs\n");
    if a.failed_jobs.is_empty() {
        let _ = writeln!(o, "No blocking job failed.\n");
    } else {
        let _ = writeln!(o, "| Job | Failure mode | Pass rate now | Before | Trend | Retries | History (newest first) | Streak |\n|---|---|---|---|---|---|---|---|");
        for j in &a.failed_jobs {
            let m = j.modes.first();
            let (now, before, trend) = match &j.pass_rate {
                Some(p) => (
                    p.current.describe(),
                    p.previous.describe(),
                    format!("{}{}", p.trend.as_str(), p.delta_pp.map(|d| format!(" ({d:+.1} pp)")).unwrap_or_default()),
                ),
                None => ("-".into(), "-".into(), "-".into()),
            };
            let _ = writeln!(
                o,
                "| {} | {} {}: {} | {} | {} | {} | {} | `{}` | {}{} |",
                link(j.url.as_deref(), &j.name),
                m.map(|m| m.root_cause.clone()).unwrap_or_default(),
                m.map(|m| m.class.class.as_str()).unwrap_or(""),
                m.map(|m| code(&m.summary.chars().take(120).collect::<String>())).unwrap_or_default(),
                now,
                before,
                trend,
                j.retries,
                j.streak.pattern,
                j.streak.length,
                j.streak.originating.as_ref().map(|t| format!(" since {}", cell(t))).unwrap_or_default()
            );
        }
        if let Some(w) = &a.window {
            let _ = writeln!(o, "\nPass rates: {}.", cell(&w.definition));
        }
        o.push('\n');
        for j in &a.failed_jobs {
            job_detail(o, j);
        }
    }
}

/// One failed job in detail.
fn job_detail(o: &mut String, j: &FailedJob) {
    let _ = writeln!(o, "### {}\n", cell(&j.name));
    let ev = match &j.junit {
        None => "no evidence found for the run".to_string(),
        Some(JunitState::Found { files }) => format!("{files} JUnit file(s), {} test case(s)", j.tests_total),
        Some(JunitState::Partial { files, .. }) => {
            format!("{files} JUnit file(s), some unreadable: counts are a lower bound")
        }
        Some(JunitState::Missing) => "no JUnit: unknown, not green".into(),
        Some(JunitState::Unparseable { .. }) => "JUnit unparseable".into(),
        Some(JunitState::Empty { .. }) => "JUnit export empty: insufficient evidence".into(),
    };
    let _ = writeln!(o, "Evidence: {}.\n", cell(&ev));
    for m in &j.modes {
        let _ = writeln!(
            o,
            "- **{}** {} ({}): {} — first failed in {} ({} payload(s)); {}.",
            m.root_cause,
            m.class.class.as_str(),
            cell(&m.class.reason),
            code(&m.summary),
            cell(&m.first_failed_in),
            m.payloads_failing,
            cell(&m.before.describe())
        );
        for l in m.lines.iter().take(5) {
            let _ = writeln!(o, "  - {} {}", cell(&l.at.cite()), code(&l.text));
        }
    }
    for t in &j.tests {
        let _ = writeln!(
            o,
            "- test {} first failed in {}{} ({} payload(s)), {}",
            code(&t.name),
            cell(&t.first_failed_in),
            if t.onset_certain { "" } else { " or earlier" },
            t.payloads_failing,
            cell(&t.at.cite())
        );
    }
    for pa in &j.previous_attempts {
        let _ = writeln!(
            o,
            "- previous attempt {}: {}",
            link(Some(&pa.url), pa.url.rsplit('/').next().unwrap_or(&pa.url)),
            match pa.same_failure {
                Some(true) => "same failure",
                Some(false) => "different failure",
                None => "no evidence",
            }
        );
    }
    if let Some(agg) = &j.aggregated {
        let _ = writeln!(o, "- aggregated over {}", cell(&agg.underlying_jobs.join(", ")));
        for t in &agg.failed_tests {
            let _ = writeln!(
                o,
                "  - {}: {}",
                code(&t.name),
                cell(t.verdict.as_ref().map(|v| v.sentence.as_str()).unwrap_or("failed"))
            );
        }
    }
    o.push('\n');
}

/// The root causes with their evidence.
fn root_causes_section(o: &mut String, a: &PayloadAnalysis) {
    let _ = writeln!(o, "## Root causes\n");
    for r in &a.root_causes {
        let _ = writeln!(o, "### {} — {}\n", r.id, cell(&r.title));
        let _ = writeln!(
            o,
            "{} ({}); signature `{}`; jobs: {}; first failed in {}{}.\n",
            r.class.class.as_str(),
            cell(&r.class.reason),
            r.signature.id,
            cell(&r.jobs.join(", ")),
            cell(&r.first_failed_in),
            if r.is_systemic { "; systemic" } else { "" }
        );
        for (j, l) in &r.evidence {
            let _ = writeln!(o, "- {} {}: {}", cell(j), cell(&l.at.cite()), code(&l.text));
        }
        symptoms(o, r);
        if let Some(why) = &r.apart {
            let _ = writeln!(o, "\nStands apart: {}.", cell(why));
        }
        if let Some(n) = &r.no_candidate_reason {
            let _ = writeln!(o, "\nNo suspect: {}.", cell(n));
        }
        o.push('\n');
    }
}

/// The symptoms of a root cause that groups several signatures: each failure
/// line with its tests (the first five named).
fn symptoms(o: &mut String, r: &RootCause) {
    if r.symptoms.is_empty() {
        return;
    }
    let tests: usize = r.symptoms.iter().map(|s| s.tests.len()).sum();
    let _ = writeln!(
        o,
        "\nOne cause, {} symptoms ({tests} failing tests in the same jobs since the same payload, failing the same way):\n",
        r.symptoms.len()
    );
    for s in &r.symptoms {
        let named: Vec<String> = s.tests.iter().take(5).map(|t| cell(t)).collect();
        let more = if s.tests.len() > 5 { format!(" and {} more", s.tests.len() - 5) } else { String::new() };
        let _ = writeln!(o, "- {} — {}{more}", code(&s.line), named.join("; "));
    }
}

/// The suspects and their verbatim matches.
fn suspects_section(o: &mut String, a: &PayloadAnalysis) {
    let _ = writeln!(o, "## Suspect changes\n");
    if a.suspects.is_empty() {
        let _ = writeln!(o, "No candidate has any link to a failure ({} candidate(s) scored).\n", a.candidates.len());
    } else {
        let _ = writeln!(o, "| Root cause | # | Change | Score | Rubric | Action |\n|---|---|---|---|---|---|");
        for s in &a.suspects {
            let Some(c) = a.candidate(&s.candidate) else { continue };
            let mut rubric: Vec<String> = s
                .score
                .items
                .iter()
                .map(|i| format!("{}: +{} — {}", i.signal.name(), i.points, cell(&i.evidence)))
                .collect();
            rubric.push(format!("total: {}", s.score.total));
            let _ = writeln!(
                o,
                "| {} | {}{} | {} {} | {} {} | {} | {} ({}) |",
                s.root_cause,
                s.rank,
                if s.tied_with.is_empty() { "" } else { "=" },
                link(c.url.as_deref(), &c.short()),
                cell(&c.title),
                s.band.as_str(),
                s.score.total,
                rubric.join("<br>"),
                s.action.as_str(),
                cell(&s.action_reason)
            );
        }
        o.push('\n');
        ties(o, a);
        for s in a.suspects.iter().filter(|s| s.score.error_match.is_some()) {
            let m = s.score.error_match.as_ref().unwrap();
            let c = a.candidate(&s.candidate).map(|c| c.short()).unwrap_or_default();
            let _ = writeln!(
                o,
                "Verbatim match for {} ({}):\n\n- failure {}: {}\n- diff {}:{}: {}\n",
                cell(&c),
                s.root_cause,
                cell(&m.log.at.cite()),
                code(&m.log.text),
                cell(&m.diff_file),
                m.diff_line,
                code(&m.diff_text)
            );
        }
    }
}

/// The tied suspects of each root cause, with what would separate them.
fn ties(o: &mut String, a: &PayloadAnalysis) {
    let all: Vec<(&RootCause, &SuspectTie)> =
        a.root_causes.iter().flat_map(|r| r.ties.iter().map(move |t| (r, t))).collect();
    if all.is_empty() {
        return;
    }
    let _ = writeln!(o, "Ties (`=`: the same score from equally strong evidence; their order says nothing):\n");
    for (r, t) in all {
        let names: Vec<String> =
            t.candidates.iter().map(|id| a.candidate(id).map(|c| c.short()).unwrap_or_else(|| id.clone())).collect();
        let _ = writeln!(
            o,
            "- {} rank {} at {}: {} — {}{}",
            r.id,
            t.rank,
            t.score,
            cell(&names.join(", ")),
            cell(&t.separate_by),
            if t.bisect_between { "; bisect between them" } else { "" }
        );
    }
    o.push('\n');
}

/// The broader context.
fn context_section(o: &mut String, a: &PayloadAnalysis) {
    let _ = writeln!(o, "## Broader context\n");
    let mut any = false;
    for r in a.root_causes.iter().filter(|r| r.is_systemic) {
        any = true;
        let mut plats: Vec<String> = r.platforms.clone();
        plats.extend(r.systemic.iter().filter_map(|h| h.platform.clone()));
        plats.sort();
        plats.dedup();
        let mut parts = vec![format!("{} failed blocking job(s)", r.jobs.len())];
        if !plats.is_empty() {
            parts.push(format!("{} platform(s) ({})", plats.len(), cell(&plats.join(", "))));
        }
        if !r.systemic.is_empty() {
            parts.push(format!(
                "the same signature in {}",
                cell(&r.systemic.iter().map(|h| format!("{} ({})", h.job, h.lifecycle)).collect::<Vec<_>>().join(", "))
            ));
        }
        let _ = writeln!(o, "- {} is systemic: {}", r.id, parts.join("; "));
    }
    if !any {
        let _ = writeln!(o, "- No root cause shows up beyond its failed blocking jobs.");
    }
    for r in &a.passed_on_retry {
        let sig = r
            .failed_attempts
            .iter()
            .filter_map(|p| p.signature.as_ref())
            .map(|s| code(&s.text))
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(
            o,
            "- blocking {} passed on retry {} (failed attempt: {})",
            link(r.url.as_deref(), &r.name),
            r.retries,
            if sig.is_empty() { "no evidence".into() } else { sig }
        );
    }
    for f in &a.informing_failures {
        let _ = writeln!(
            o,
            "- {} {} failed: {}{}",
            cell(&f.lifecycle),
            link(f.url.as_deref(), &f.name),
            f.signature.as_ref().map(|s| code(&s.text)).unwrap_or_else(|| "no evidence".into()),
            f.root_cause.as_ref().map(|r| format!(" (shares {r})")).unwrap_or_default()
        );
    }
    o.push('\n');
}

/// The action taken and the force-accept conditions.
fn action_section(o: &mut String, a: &PayloadAnalysis) {
    let _ = writeln!(o, "## Action taken\n\n**{}** — {}\n", a.decision.verdict.as_str(), cell(&a.decision.summary));
    for s in a.suspects.iter().filter(|s| s.action != CandidateAction::ReportOnly) {
        let _ = writeln!(
            o,
            "- {}: {} — {}",
            s.action.as_str(),
            a.candidate(&s.candidate).map(|c| c.short()).unwrap_or_default(),
            cell(&s.action_reason)
        );
    }
    let _ = writeln!(
        o,
        "\nForce-accept: {}.",
        if a.decision.force_accept.recommended { "recommended" } else { "not recommended" }
    );
    for r in &a.decision.force_accept.reasons {
        let _ = writeln!(o, "- {}", cell(r));
    }
    o.push('\n');
}

/// The recommendations with their evidence.
fn recommendations_section(o: &mut String, a: &PayloadAnalysis) {
    let _ = writeln!(o, "## Recommendations\n");
    if a.recommendations.is_empty() {
        let _ = writeln!(o, "1. Nothing to do.");
    }
    for (i, r) in a.recommendations.iter().enumerate() {
        let _ = writeln!(o, "{}. {}", i + 1, cell(&r.text));
        for e in &r.evidence {
            let _ = writeln!(o, "   - {}", code(e));
        }
    }
    o.push('\n');
}

/// The data gaps and the footer.
fn data_gaps_section(o: &mut String, a: &PayloadAnalysis) {
    let p = &a.payload;
    let _ = writeln!(o, "## Data gaps\n");
    if a.data_gaps.is_empty() {
        let _ = writeln!(o, "None.");
    }
    for g in &a.data_gaps {
        let _ = writeln!(o, "- {}", cell(g));
    }
    let _ = writeln!(o, "\n---\nGenerated by citriage from {}.", cell(&p.source));
}

#[cfg(test)]
mod tests {
    use super::cell;

    #[test]
    fn comparisons_read_as_written_and_html_stays_text() {
        assert_eq!(cell("retries > 2, age < 18 h"), "retries > 2, age < 18 h");
        assert_eq!(cell("<script>x</script> a|b"), "\\<script\\>x\\</script\\> a\\|b");
        assert_eq!(cell("x\u{1b}]8;;https://evil\u{7}y"), "x\\\\u{1b}]8;;https://evil\\\\u{7}y");
        assert_eq!(cell("> quoted"), "\\> quoted");
        assert!(!cell("a < b > c").contains("&lt;"));
    }
}
