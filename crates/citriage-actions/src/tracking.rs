//! The bisect tracking file, `<payload-tag>-bisect.yaml`, in the shape the payload
//! agent's bisect workflow documents: `metadata` (payload, version, stream,
//! architecture, release-controller URL, phase timestamps), `experiments` (the
//! suspect PR, the draft revert PR, the payload jobs asked for, the failing jobs
//! attributed, status, result, ticket) and `deferred_suspects`.
//!
//! Before `--apply` an experiment's status is `drafted` (nothing opened yet); the
//! documented statuses follow: `pending` once the draft revert PR is opened and the
//! jobs asked for, `skipped_conflict` when the revert pre-check found conflicts.
//! Strings are written double-quoted with JSON escapes, which YAML reads verbatim.
//!
//! The file is a view of a [`Bisect`] (`payload.rs`), so this module depends on that
//! one and never the other way round: [`Bisect::tracking_yaml`] is defined here.

use crate::payload::{Bisect, Opened};
use citriage_payload::result::PayloadAnalysis;
use std::collections::BTreeMap;
use std::fmt::Write as _;

fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

fn num(n: Option<u64>) -> String {
    n.map(|n| n.to_string()).unwrap_or_else(|| "null".into())
}

/// `key:` followed by ` []` for an empty list, else a line break.
fn list_head(o: &mut String, indent: &str, key: &str, empty: bool) {
    let _ = writeln!(o, "{indent}{key}:{}", if empty { " []" } else { "" });
}

impl Bisect {
    /// The tracking file in the payload agent's documented shape; `opened` holds the
    /// draft revert PRs already opened (by draft name) and `phase1_completed_at` when
    /// they were (empty before).
    pub fn tracking_yaml(
        &self,
        a: &PayloadAnalysis,
        opened: &BTreeMap<String, Opened>,
        phase1_completed_at: &str,
    ) -> String {
        render(a, self, opened, phase1_completed_at)
    }
}

fn render(a: &PayloadAnalysis, b: &Bisect, opened: &BTreeMap<String, Opened>, phase1: &str) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "metadata:");
    let _ = writeln!(o, "  payload_tag: {}", q(&a.payload.tag));
    let _ = writeln!(o, "  version: {}", q(&a.payload.version));
    let _ = writeln!(o, "  stream: {}", q(&a.payload.stream));
    let _ = writeln!(o, "  architecture: {}", q(&a.payload.architecture));
    let _ = writeln!(o, "  release_controller_url: {}", q(&a.payload.release_url));
    let _ = writeln!(o, "  phase1_completed_at: {}", q(phase1));
    let _ = writeln!(o, "  phase2_completed_at: \"\"");
    let _ = writeln!(o);
    list_head(&mut o, "", "experiments", b.drafts.is_empty());
    for d in &b.drafts {
        let Some(s) = &d.suspect else { continue };
        let _ = writeln!(o, "  - suspect_pr:");
        let _ = writeln!(o, "      url: {}", q(&s.url));
        let _ = writeln!(o, "      number: {}", s.number);
        let _ = writeln!(o, "      component: {}", q(&s.component));
        let _ = writeln!(o, "      title: {}", q(&s.title));
        let _ = writeln!(o, "      confidence_score: {}", s.confidence_score);
        let op = opened.get(&d.name);
        let _ = writeln!(o, "    revert_pr:");
        let _ = writeln!(o, "      url: {}", q(op.map(|x| x.url.as_str()).unwrap_or("")));
        let _ = writeln!(o, "      number: {}", num(op.map(|x| x.number)));
        let _ = writeln!(o, "      state: \"draft\"");
        list_head(&mut o, "    ", "triggered_jobs", d.payload_jobs.is_empty());
        for t in &d.payload_jobs {
            let _ = writeln!(o, "      - job_name: {}", q(&t.job_name));
            let _ = writeln!(o, "        type: {}", q(&t.kind));
            let _ = writeln!(o, "        command: {}", q(&t.command));
            let _ = writeln!(o, "        payload_test_url: \"\"");
            let _ = writeln!(o, "        prow_url: \"\"");
        }
        let mut attributed: Vec<&str> = d.payload_jobs.iter().map(|p| p.failing_job.as_str()).collect();
        attributed.sort();
        attributed.dedup();
        list_head(&mut o, "    ", "failing_jobs_attributed", attributed.is_empty());
        for j in attributed {
            let _ = writeln!(o, "      - {}", q(j));
        }
        let status = match (&d.conflict_check, op) {
            (Some(c), _) if !c.clean && c.error.is_none() => "skipped_conflict",
            (_, Some(_)) => "pending",
            _ => "drafted",
        };
        let _ = writeln!(o, "    status: {}", q(status));
        let _ = writeln!(o, "    result_summary: \"\"");
        let _ = writeln!(o, "    jira_key: \"\"");
        let _ = writeln!(o, "    jira_url: \"\"");
    }
    let _ = writeln!(o);
    list_head(&mut o, "", "deferred_suspects", b.deferred.is_empty());
    for s in &b.deferred {
        let _ = writeln!(o, "  - url: {}", q(&s.url));
        let _ = writeln!(o, "    number: {}", num(s.number));
        let _ = writeln!(o, "    component: {}", q(&s.component));
        let _ = writeln!(o, "    confidence_score: {}", s.confidence_score);
    }
    o
}
