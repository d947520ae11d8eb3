//! Rendering a [`Verification`]: Markdown (also readable as plain text in a terminal)
//! and JSON. Both list findings by line with the rule and the evidence, what could not
//! be checked and why, each rule's outcome, and the figures.

use crate::rules::{rule_info, CheckStatus, Verification, RULES};

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn status_text(s: CheckStatus) -> &'static str {
    match s {
        CheckStatus::Passed => "passed",
        CheckStatus::Failed => "FAILED",
        CheckStatus::Incomplete => "incomplete",
        CheckStatus::NotApplicable => "not applicable",
    }
}

/// The verification as Markdown. `name` is the report's name as the user gave it.
pub fn render_markdown(v: &Verification, name: &str) -> String {
    let mut s = String::new();
    s.push_str(&format!("# Verification of `{}`\n\n", name.replace('`', "'")));
    s.push_str(&format!(
        "**Verdict**: {} — {} finding(s), {} item(s) not checked.\n\n",
        v.verdict(),
        v.findings.len(),
        v.unchecked.len()
    ));
    s.push_str("## Findings\n\n");
    if v.findings.is_empty() {
        s.push_str("None.\n\n");
    } else {
        s.push_str("| Line | Rule | Finding | Evidence |\n|---:|---|---|---|\n");
        for f in &v.findings {
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
        s.push_str("None: every reference, file:line and build URL was checked.\n\n");
    } else {
        s.push_str("These were neither confirmed nor refuted; the report's claims about them stand unverified.\n\n");
        s.push_str("| Line | Kind | What | Why | Also on lines |\n|---:|---|---|---|---|\n");
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
    s.push_str(
        "## Checks\n\n| Rule | Source | Outcome | Findings | Not checked | Note |\n|---|---|---|---:|---:|---|\n",
    );
    for c in &v.checks {
        let r = rule_info(&c.rule_id);
        s.push_str(&format!(
            "| `{}` — {} | {} | {} | {} | {} | {} |\n",
            c.rule_id,
            cell(r.text),
            cell(r.source),
            status_text(c.status),
            c.findings,
            c.unchecked,
            cell(&c.note)
        ));
    }
    let st = &v.stats;
    s.push_str(&format!(
        "\n## Figures\n\n- Report: {} lines, {} format, {} sections, {} pattern(s), {} sub-pattern(s).\n- References: {} cited ({} distinct): {} checked, {} not checked ({} ambiguous).\n- file:line: {} cited ({} distinct), {} resolved.\n- Build URLs: {} cited ({} distinct builds), {} known; {} bare build id(s) without a URL.\n",
        st.lines,
        st.format,
        st.sections,
        st.patterns,
        st.sub_patterns,
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
        st.bare_build_ids
    ));
    s
}

/// The verification as JSON, with the verdict, the exit code and the rule catalogue.
pub fn render_json(v: &Verification, name: &str, allow_unchecked: bool) -> serde_json::Value {
    serde_json::json!({
        "format": "citriage-verify/1",
        "report": name,
        "verdict": v.verdict(),
        "exit_code": v.exit_code(allow_unchecked),
        "findings": v.findings,
        "unchecked": v.unchecked,
        "checks": v.checks,
        "stats": v.stats,
        "rules": RULES,
    })
}
