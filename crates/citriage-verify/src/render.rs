//! Rendering a [`Verification`]: Markdown (also readable as plain text in a terminal),
//! with findings grouped by severity, what could not be checked grouped by reason,
//! the claims by kind and verdict, each rule's outcome and the figures; and JSON,
//! which also lists every claim with its verdict and evidence for other tools.

use crate::outcome::{rule_info, CheckStatus, Severity, Verdict, Verification, RULES};
use citriage_model::escape::md_cell as cell;
use std::collections::BTreeMap;

fn status_text(s: CheckStatus) -> &'static str {
    match s {
        CheckStatus::Passed => "passed",
        CheckStatus::Failed => "FAILED",
        CheckStatus::Incomplete => "incomplete",
        CheckStatus::NotApplicable => "not applicable",
    }
}

fn verdict_text(v: Verdict) -> &'static str {
    match v {
        Verdict::Verified => "verified",
        Verdict::False => "false",
        Verdict::Unchecked => "unchecked",
    }
}

const GROUPS: &[(Severity, &str, &str)] = &[
    (Severity::Error, "Errors", "false statements about PRs, code, builds and commits"),
    (Severity::Warning, "Warnings", "runbook rules the report breaks"),
    (Severity::Note, "Notes", "right when written, out of date now"),
];

/// The verification as Markdown. `name` is the report's name as the user gave it.
pub fn render_markdown(v: &Verification, name: &str) -> String {
    let mut s = String::new();
    s.push_str(&format!("# Verification of `{}`\n\n", name.replace('`', "'")));
    let count = |sev: Severity| v.findings.iter().filter(|f| f.severity == sev).count();
    let st = &v.stats;
    s.push_str(&format!(
        "**Verdict**: {} — {} finding(s) ({} error(s), {} warning(s), {} note(s)), {} item(s) not checked. Claims read: {} verified, {} false, {} unchecked{}.\n\n",
        v.verdict(),
        v.findings.len(),
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Note),
        v.unchecked.len(),
        st.claims_verified,
        st.claims_false,
        st.claims_unchecked,
        st.as_of.as_ref().map(|d| format!(", judged as of {d}")).unwrap_or_default()
    ));
    if v.findings.is_empty() {
        s.push_str("## Findings\n\nNone.\n\n");
    }
    for (sev, title, what) in GROUPS {
        let fs: Vec<_> = v.findings.iter().filter(|f| f.severity == *sev).collect();
        if fs.is_empty() {
            continue;
        }
        s.push_str(&format!("## {title} ({}) — {what}\n\n", fs.len()));
        s.push_str("| Line | Rule | Finding | Evidence |\n|---:|---|---|---|\n");
        for f in fs {
            let ev: Vec<String> =
                f.evidence.iter().map(|e| format!("{} `{}`", e.id, e.locator.replace('`', "'"))).collect();
            s.push_str(&format!(
                "| {} | `{}` — {} | {} | {} |\n",
                f.line,
                f.rule_id,
                cell(&f.rule),
                cell(&f.message),
                if ev.is_empty() { "—".to_string() } else { cell(&ev.join("; ")) }
            ));
        }
        s.push('\n');
    }
    s.push_str("## Not checked\n\n");
    if v.unchecked.is_empty() {
        s.push_str("None: every claim the verifier found was checked.\n\n");
    } else {
        s.push_str("These were neither confirmed nor refuted; the report's claims about them stand unverified.\n\n");
        s.push_str("| Kind | Why | Count | Examples |\n|---|---|---:|---|\n");
        for g in v.not_checked_summary() {
            s.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                g.kind,
                cell(&g.why),
                g.count,
                cell(&g.examples.join(", "))
            ));
        }
        s.push_str("\n| Line | Kind | What | Why | Also on lines |\n|---:|---|---|---|---|\n");
        for u in &v.unchecked {
            let also: Vec<String> = u.other_lines.iter().map(|l| l.to_string()).collect();
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                u.line,
                u.kind,
                cell(&u.what),
                cell(&u.why),
                if also.is_empty() { "—".to_string() } else { also.join(", ") }
            ));
        }
        s.push('\n');
    }
    if !v.claims.is_empty() {
        let mut by: BTreeMap<&str, [usize; 3]> = BTreeMap::new();
        for c in &v.claims {
            let e = by.entry(c.kind.as_str()).or_default();
            e[match c.verdict {
                Verdict::Verified => 0,
                Verdict::False => 1,
                Verdict::Unchecked => 2,
            }] += 1;
        }
        s.push_str("## Claims read\n\n| Kind | Verified | False | Unchecked |\n|---|---:|---:|---:|\n");
        for (k, n) in by {
            s.push_str(&format!("| {k} | {} | {} | {} |\n", n[0], n[1], n[2]));
        }
        s.push_str("\n(`--format json` lists each claim with its verdict and evidence.)\n\n");
    }
    s.push_str(
        "## Checks\n\n| Rule | Severity | Source | Outcome | Findings | Not checked | Note |\n|---|---|---|---|---:|---:|---|\n",
    );
    for c in &v.checks {
        let r = rule_info(&c.rule_id);
        s.push_str(&format!(
            "| `{}` — {} | {} | {} | {} | {} | {} | {} |\n",
            c.rule_id,
            cell(r.text),
            r.severity.as_str(),
            cell(r.source),
            status_text(c.status),
            c.findings,
            c.unchecked,
            cell(&c.note)
        ));
    }
    s.push_str(&format!(
        "\n## Figures\n\n- Report: {} lines, {} format, {} sections, {} pattern(s), {} sub-pattern(s){}.\n- References: {} cited ({} distinct): {} checked, {} not checked ({} ambiguous).\n- file:line: {} cited ({} distinct), {} resolved.\n- Builds: {} cited ({} distinct), {} known; {} bare build id(s) without a URL.\n- Commits: {} distinct SHA(s).\n- Claims: {} verified, {} false, {} unchecked.\n",
        st.lines,
        st.format,
        st.sections,
        st.patterns,
        st.sub_patterns,
        st.as_of.as_ref().map(|d| format!("; dated {d}")).unwrap_or_else(|| "; undated (claims judged against the state as read)".into()),
        st.refs_found,
        st.refs_distinct,
        st.refs_checked,
        st.refs_unchecked,
        st.refs_ambiguous,
        st.file_lines_found,
        st.file_lines_distinct,
        st.file_lines_resolved,
        st.build_urls_found,
        st.build_urls_distinct,
        st.build_urls_known,
        st.bare_build_ids,
        st.commits_distinct,
        st.claims_verified,
        st.claims_false,
        st.claims_unchecked,
    ));
    s
}

/// The verification as JSON, with the verdict, the exit code, every claim with its
/// verdict and evidence, and the rule catalogue.
pub fn render_json(v: &Verification, name: &str, allow_unchecked: bool) -> serde_json::Value {
    let count = |sev: Severity| v.findings.iter().filter(|f| f.severity == sev).count();
    let claims: Vec<serde_json::Value> = v
        .claims
        .iter()
        .map(|c| {
            serde_json::json!({
                "line": c.line,
                "kind": c.kind,
                "subject": c.subject,
                "claim": c.claim,
                "words": c.words,
                "verdict": verdict_text(c.verdict),
                "detail": c.detail,
                "evidence": c.evidence,
            })
        })
        .collect();
    serde_json::json!({
        "format": "citriage-verify/2",
        "report": name,
        "verdict": v.verdict(),
        "exit_code": v.exit_code(allow_unchecked),
        "severity_counts": {
            "error": count(Severity::Error),
            "warning": count(Severity::Warning),
            "note": count(Severity::Note),
        },
        "findings": v.findings,
        "claims": claims,
        "unchecked": v.unchecked,
        "not_checked_summary": v.not_checked_summary(),
        "checks": v.checks,
        "stats": v.stats,
        "rules": RULES,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::{Finding, Stats};

    #[test]
    fn hostile_finding_text_stays_in_its_cell() {
        let v = Verification {
            findings: vec![Finding {
                line: 3,
                rule_id: "ref-exists".into(),
                severity: Severity::Error,
                rule: "a rule".into(),
                message: "PR title <img src=x onerror=alert(1)> | fake\ncolumn\u{1b}[2J".into(),
                evidence: vec![],
            }],
            unchecked: vec![],
            claims: vec![],
            checks: vec![],
            stats: Stats::default(),
        };
        let md = render_markdown(&v, "report.md");
        // Before, only `|` and the line break were escaped: the tag and the escape
        // sequence reached the report raw.
        assert!(md.contains("| PR title \\<img src=x onerror=alert(1)\\> \\| fake column\\\\u{1b}[2J |"), "{md}");
        assert!(!md.contains('\u{1b}'));
    }
}
