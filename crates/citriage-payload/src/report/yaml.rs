//! `payload-results-<tag>.yaml` in the openshift-eng/ai-helpers shape, for the tools that
//! consume it (revert staging, bisection): `metadata`, `failing_jobs[]`
//! (`job_name`, `prow_url`, `failure_type` ∈ install / test / upgrade / infra,
//! `root_cause_summary`, `streak_length`, `originating_payload_tag`) and
//! `candidates[]` (`type: pr` with `pr_url`, `pr_number`, `component`, or
//! `type: rhcos_rpm` with `rhcos_tag`, `rhcos_name`, `package`, `old_version`,
//! `new_version`, `changelog_evidence`; both with `confidence_score`, an
//! itemized `rationale`, `failing_jobs` and `actions`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use crate::candidate::{Candidate, CandidateKind};
use crate::classify::FailureClass;
use crate::result::*;

/// A double-quoted YAML scalar.
pub fn q(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\t' => o.push_str("\\t"),
            '\r' => o.push_str("\\r"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn block(indent: &str, text: &str) -> String {
    let mut o = String::from("|\n");
    for l in text.lines() {
        let clean: String = l.chars().map(|c| if c.is_control() && c != '\t' { ' ' } else { c }).collect();
        let _ = writeln!(o, "{indent}{clean}");
    }
    o
}

fn failure_type(j: &FailedJob, m: Option<&FailureMode>) -> &'static str {
    let Some(m) = m else { return "test" };
    if m.class.class == FailureClass::Infrastructure {
        return "infra";
    }
    let installish = m.tests.iter().any(|t| t.contains("install should succeed") || t.contains("-install-install"))
        || m.failed_step.as_deref().is_some_and(|s| s.contains("install"));
    if installish {
        return "install";
    }
    if j.prow_job.as_deref().unwrap_or(&j.name).contains("upgrade") {
        return "upgrade";
    }
    "test"
}

/// Renders the results YAML.
pub fn render_results_yaml(a: &PayloadAnalysis) -> String {
    let mut o = String::new();
    metadata(&mut o, a);
    failing_jobs(&mut o, a);
    candidates(&mut o, a);
    o
}

fn metadata(o: &mut String, a: &PayloadAnalysis) {
    let p = &a.payload;
    o.push_str("metadata:\n");
    let _ = writeln!(o, "  payload_tag: {}", q(&p.tag));
    let _ = writeln!(o, "  version: {}", q(&p.version));
    let _ = writeln!(o, "  stream: {}", q(&p.stream));
    let _ = writeln!(o, "  architecture: {}", q(&p.architecture));
    let _ = writeln!(o, "  phase: {}", q(p.phase.as_str()));
    let _ = writeln!(o, "  release_controller_url: {}", q(&p.release_url));
    if let Some(t) = &p.as_of {
        let _ = writeln!(o, "  analyzed_at: {}", q(t));
    }
    let _ = writeln!(o, "  force_accept_recommended: {}", a.decision.force_accept.recommended);
    o.push('\n');
}

fn failing_jobs(o: &mut String, a: &PayloadAnalysis) {
    if a.failed_jobs.is_empty() {
        o.push_str("failing_jobs: []\n");
    } else {
        o.push_str("failing_jobs:\n");
        for j in &a.failed_jobs {
            let m = j.modes.first();
            let _ = writeln!(o, "  - job_name: {}", q(j.prow_job.as_deref().unwrap_or(&j.name)));
            if let Some(u) = &j.url {
                let _ = writeln!(o, "    prow_url: {}", q(u));
            }
            let _ = writeln!(o, "    failure_type: {}", q(failure_type(j, m)));
            let summary = match m {
                Some(m) if j.modes.len() > 1 => {
                    format!("{} ({}; +{} more failure mode(s))", m.summary, m.class.class.as_str(), j.modes.len() - 1)
                }
                Some(m) => format!("{} ({})", m.summary, m.class.class.as_str()),
                None => "no failure evidence".into(),
            };
            let _ = writeln!(o, "    root_cause_summary: {}", q(&summary));
            let _ = writeln!(o, "    streak_length: {}", j.streak.length);
            if let Some(m) = m {
                let _ = writeln!(o, "    originating_payload_tag: {}", q(&m.first_failed_in));
            }
        }
    }
    o.push('\n');
}

/// One entry per candidate with a score above 0: its best score, all its jobs.
fn candidates(o: &mut String, a: &PayloadAnalysis) {
    let mut best: BTreeMap<&str, &Suspect> = BTreeMap::new();
    let mut jobs: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for s in &a.suspects {
        let e = best.entry(&s.candidate).or_insert(s);
        if s.score.total > e.score.total {
            *e = s;
        }
        for j in &s.jobs {
            let prow = a
                .failed_jobs
                .iter()
                .find(|f| f.name == *j)
                .and_then(|f| f.prow_job.clone())
                .unwrap_or_else(|| j.clone());
            jobs.entry(&s.candidate).or_default().insert(prow);
        }
    }
    let mut list: Vec<&Suspect> = best.into_values().collect();
    list.sort_by(|x, y| y.score.total.cmp(&x.score.total).then(x.candidate.cmp(&y.candidate)));
    if list.is_empty() {
        o.push_str("candidates: []\n");
        return;
    }
    o.push_str("candidates:\n");
    for s in list {
        let Some(c) = a.candidate(&s.candidate) else { continue };
        candidate(o, s, c, jobs.get(s.candidate.as_str()));
    }
}

/// One candidate entry.
fn candidate(o: &mut String, s: &Suspect, c: &Candidate, jobs: Option<&BTreeSet<String>>) {
    match c.kind {
        CandidateKind::RhcosRpm => {
            let r = c.rpm.as_ref();
            o.push_str("  - type: \"rhcos_rpm\"\n");
            let _ = writeln!(o, "    rhcos_tag: {}", q(r.map(|r| r.variant_tag.as_str()).unwrap_or("")));
            let _ = writeln!(o, "    rhcos_name: {}", q(r.map(|r| r.variant_name.as_str()).unwrap_or("")));
            let _ = writeln!(o, "    package: {}", q(r.map(|r| r.package.as_str()).unwrap_or("")));
            let _ = writeln!(o, "    old_version: {}", q(r.map(|r| r.old_version.as_str()).unwrap_or("")));
            let _ = writeln!(o, "    new_version: {}", q(r.map(|r| r.new_version.as_str()).unwrap_or("")));
            let ev = s.score.error_match.as_ref().map(|m| m.diff_text.clone()).unwrap_or_else(|| "none".into());
            let _ = writeln!(o, "    changelog_evidence: {}", q(&ev));
        }
        _ => {
            o.push_str("  - type: \"pr\"\n");
            if let Some(u) = &c.url {
                let _ = writeln!(o, "    pr_url: {}", q(u));
            }
            if let Some(n) = c.number {
                let _ = writeln!(o, "    pr_number: {n}");
            }
            let comp = if c.kind == CandidateKind::CiConfig {
                format!("{} (CI configuration)", c.repo.as_deref().unwrap_or(""))
            } else {
                c.component.clone()
            };
            let _ = writeln!(o, "    component: {}", q(&comp));
            let _ = writeln!(o, "    title: {}", q(&c.title));
        }
    }
    let _ = writeln!(o, "    confidence_score: {}", s.score.total);
    let mut rationale = String::new();
    for i in &s.score.items {
        let _ = writeln!(rationale, "{}: +{} — {}", i.signal.name(), i.points, i.evidence);
    }
    if let Some(m) = &s.score.error_match {
        let _ = writeln!(rationale, "failure line: {}: {}", m.log.at.cite(), m.log.text);
        let _ = writeln!(rationale, "diff line: {}:{}: {}", m.diff_file, m.diff_line, m.diff_text);
    }
    let _ = writeln!(rationale, "total: {}", s.score.total);
    let _ = write!(o, "    rationale: {}", block("      ", &rationale));
    if !s.tied_with.is_empty() {
        o.push_str("    tied_with:\n");
        for t in &s.tied_with {
            let _ = writeln!(o, "      - {}", q(t));
        }
    }
    o.push_str("    failing_jobs:\n");
    for j in jobs.into_iter().flatten() {
        let _ = writeln!(o, "      - {}", q(j));
    }
    o.push_str("    actions: []\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(q("a\"b\\c\nd\u{1}"), "\"a\\\"b\\\\c\\nd\\u0001\"");
    }
}
